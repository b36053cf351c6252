import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, FAULT_CLASSES, sim, waitFor } from "../support/http.js";
import { openFollow, until } from "../support/sse.js";

let front: Front;
let base: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-engine-a-"));

beforeAll(async () => {
  front = await startFront();
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { model: "claude-sim", ...spec });
  expect(r.status).toBe(201);
  expect((await call(base, "GET", `/threads/${r.body.threadId}`)).body.engine).toBe("engine_a");
  return r.body.threadId;
}

const log = (id: string) => events(base, id);

async function simRequests(): Promise<{ path: string; headers: Record<string, string>; body: any }[]> {
  return ((await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: any[] }).requests;
}

describe("engine_a: the vendor's agent SDK, offline against the simulator", () => {
  it("answers a text turn, then resumes the same session on the next turn", async () => {
    const id = await spawn();
    const first = await call(base, "POST", `/threads/${id}/send`, { text: "hello" });
    expect(first.body).toMatchObject({ outcome: "completed", reply: { text: "echo: hello" } });
    const sessions = readdirSync(join(front.dataDir, "engine", "engine_a", "threads"));
    expect(sessions).toContain(`${id}.json`);
    const second = await call(base, "POST", `/threads/${id}/send`, { text: "again" });
    expect(second.body.reply.text).toBe("echo: again");
    // The second model call carries the first exchange: the session was resumed.
    const last = (await simRequests()).filter((r) => r.path.startsWith("/v1/messages")).at(-1)!;
    expect(JSON.stringify(last.body.messages)).toMatch(/hello.*echo: hello.*again/s);
    // Placeholder credentials only, and only the simulator was asked.
    expect(last.headers["x-api-key"]).toBe("placeholder-not-a-key");
    const row = (await call(base, "GET", `/threads/${id}`)).body;
    expect(row.cost.usd).toBeGreaterThan(0);
    expect(row.cost.inputTokens).toBeGreaterThan(0);
  });

  it("prints no raw SDK deprecation warning, and the runtime's tool server still reaches the agent", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "recall", input: { query: "anything" } }, reply: "recalled" }) });
    expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    // The tool server was handed over (now over stdin): the agent called it, and the runtime answered.
    const result = (await log(id)).find((e) => e.kind === "tool-result");
    expect(result?.body.name).toBe("mcp__runtime__recall");
    // The SDK warns once per process, on the first query that passes servers the deprecated way; any turn so far would have printed it.
    expect(front.output()).toMatch(/listening on/);
    expect(front.output()).not.toMatch(/DeprecationWarning|DEPRECATED/);
  });

  it("asks for approval through canUseTool: allowed runs the command, denied does not", async () => {
    for (const decision of ["allow", "deny"] as const) {
      const id = await spawn({ cwd: work });
      const file = `made-by-${decision}.txt`;
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: `touch ${file}` } } }) });
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
      // The workspace's index learns of the approval after the thread has opened it.
      const listed = await waitFor(async () => (await call(base, "GET", "/workspaces/default/approvals")).body.approvals.find((a: { approvalId: string }) => a.approvalId === approvalId));
      expect(listed).toMatchObject({ threadId: id, name: "Bash", input: { command: `touch ${file}` } });
      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision })).status).toBe(200);
      await waitFor(async () => !(await call(base, "GET", `/threads/${id}/turn`)).body.running);
      expect(existsSync(join(work, file))).toBe(decision === "allow");
      const events = await log(id);
      expect(events.find((e) => e.kind === "tool-call")?.body).toMatchObject({ name: "Bash" });
      expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ name: "Bash", isError: decision === "deny" });
      expect(events.at(-1)?.kind).toBe("turn-ended");
    }
  });

  it("denies every call under deny, read-only ones too: the call is made and refused", async () => {
    const id = await spawn({ cwd: work, permissions: "deny" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo read-only > /dev/null; ls" } } }) });
    expect(r.body.outcome).toBe("completed");
    const events = await log(id);
    expect(events.some((e) => e.kind === "approval-request")).toBe(false);
    const callId = events.find((e) => e.kind === "tool-call")?.body.callId;
    expect(callId).toBeDefined();
    expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ callId, name: "Bash", isError: true, output: expect.stringContaining('permissions are "deny"') });
  });

  it("asks before every call under ask, a read-only command included", async () => {
    const id = await spawn({ cwd: work });
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo only-reads" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    // Nothing ran while it waits.
    expect((await log(id)).some((e) => e.kind === "tool-result")).toBe(false);
    await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended"));
    expect((await log(id)).find((e) => e.kind === "tool-result")?.body).toMatchObject({ isError: false, output: expect.stringContaining("only-reads") });
  });

  it("turns AskUserQuestion into a runtime question: answered, dismissed, or continued without an answer", async () => {
    const replies = { answer: { answer: "the blue one" }, dismiss: {}, continue: {} } as const;
    for (const [action, body] of Object.entries(replies)) {
      const id = await spawn({ permissions: "deny" });
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ ask: "Which one?" }) });
      const requestId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.questions[0]);
      const asked = (await log(id)).find((e) => e.kind === "question");
      expect(asked?.body.question).toContain("Which one?");
      expect((await call(base, "POST", `/threads/${id}/questions/${requestId}/${action}`, body)).status).toBe(200);
      await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended" || e.kind === "turn-failed"));
      const events = await log(id);
      expect(events.find((e) => e.kind === "turn-ended")).toBeDefined();
      const result = events.find((e) => e.kind === "tool-result")?.body;
      if (action === "answer") expect(result).toMatchObject({ name: "AskUserQuestion", isError: false, output: expect.stringContaining("the blue one") });
      else expect(result).toMatchObject({ name: "AskUserQuestion", isError: true, output: expect.stringContaining(action === "dismiss" ? "dismissed" : "continue without answering") });
    }
  });

  it("handles text with parallel calls in one message, each approved apart", async () => {
    const id = await spawn({ cwd: work });
    const tools = [
      { name: "shell", input: { command: "echo first" } },
      { name: "shell", input: { command: "echo second" } },
    ];
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ say: "Two at once.", tools, reply: "both seen" }) });
    for (let i = 0; i < 2; i++) {
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
      await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
      await waitFor(async () => !(await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals.includes(approvalId));
    }
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended"));
    const events = await log(id);
    expect(events.filter((e) => e.kind === "approval-request")).toHaveLength(2);
    expect(events.filter((e) => e.kind === "tool-result").map((e) => e.body.isError)).toEqual([false, false]);
    expect(events.filter((e) => e.kind === "reply").map((e) => e.body.text)).toEqual(["Two at once.", "both seen"]);
  });

  it("never shows reasoning as the reply, and the next call still carries it", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ reasoning: "private thoughts", tool: { name: "shell", input: { command: "true" } }, reply: "answered" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "answered" } });
    expect((await log(id)).filter((e) => e.kind === "reply").map((e) => e.body.text).join("\n")).not.toContain("private thoughts");
    const last = (await simRequests()).filter((q) => q.path.startsWith("/v1/messages")).at(-1)!;
    // The CLI asks for thinking, and sends the signed block back ahead of its tool call, which the simulator checks.
    expect(last.body.thinking?.type).not.toBe("disabled");
    const assistant = last.body.messages.filter((m: any) => m.role === "assistant").at(-1);
    expect(assistant.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"]);
  });

  it("keeps a turn going past a length stop, as the agent resumes its own cut answer", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ reply: "half an ans", stop: "length" }) });
    expect(r.body.outcome).toBe("completed");
    const events = await log(id);
    // The cut message is kept, then the CLI asks the model to resume, and the turn ends when it has.
    expect(events.filter((e) => e.kind === "reply").map((e) => e.body.text)[0]).toBe("half an ans");
    expect(events.filter((e) => e.kind === "reply").length).toBe(2);
    expect(events.find((e) => e.kind === "turn-ended")?.body.stop).toBeUndefined();
  });

  it("interrupts a running turn", async () => {
    const id = await spawn();
    const stream = await openFollow(base, `/threads/${id}/stream`);
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 30, delayMs: 300 }, "long") });
    // Interrupted once its reply has begun, not merely once it started.
    await until(() => stream.frames.some((f) => f.startsWith("event: delta")));
    stream.close();
    const stopped = await call(base, "POST", `/threads/${id}/interrupt`);
    expect(stopped.body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "after" });
    expect(next.body.reply.text).toBe("echo: after");
  });

  it("continues a turn that stalled after a tool result", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo stalled" } }, stall: true }) });
    expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    const events = await log(id);
    expect(events.find((e) => e.kind === "turn-failed")?.body.class).toBe("stalled");
    expect(events.some((e) => e.kind === "message" && e.body.from === "runtime")).toBe(true);
  });

  it("records each simulated provider fault with its class", async () => {
    const id = await spawn();
    for (const [fail, cls] of FAULT_CLASSES) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ fail }) });
      expect(r.body.failure?.class, `${fail}: ${r.body.failure?.error}`).toBe(cls);
    }
  });
});

describe("engine_a's CLI is probed at start", () => {
  it("lists the CLI it found, and a missing one makes engine_a unavailable before any thread exists", async () => {
    const found = (await call(base, "GET", "/accounts")).body.engines.find((e: { engine: string }) => e.engine === "engine_a");
    expect(found).toMatchObject({ available: true, reason: null, binary: expect.stringMatching(/claude$/), versionFound: expect.stringContaining("Claude Code") });
    const missing = await startFront({ env: { SERVICE_ENGINE_A_BIN: join(work, "no-such-cli") } });
    try {
      const entry = (await call(missing.url, "GET", "/accounts")).body.engines.find((e: { engine: string }) => e.engine === "engine_a");
      expect(entry).toMatchObject({ available: false, reason: expect.stringContaining("could not be run") });
      const spawned = await call(missing.url, "POST", "/spawn", { model: "claude-sim" });
      expect(spawned.status).toBe(503);
      expect(spawned.body).toMatchObject({ code: "engine-unavailable" });
      expect((await call(missing.url, "GET", "/threads")).body.threads).toEqual([]);
    } finally {
      await missing.stop();
      removeDir(missing.dataDir);
    }
  });
});
