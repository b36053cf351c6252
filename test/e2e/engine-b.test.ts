import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, FAULT_CLASSES, sim, waitFor } from "../support/http.js";
import { openFollow, until } from "../support/sse.js";

let front: Front;
let base: string;
let port: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-engine-b-"));

beforeAll(async () => {
  port = String(await freePort());
  front = await startFront({ env: { SERVICE_AGENTS_PORT: port } });
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { engine: "engine_b", model: "gpt-sim", cwd: work, ...spec });
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const log = (id: string) => events(base, id);

describe("engine_b: codex app-server 0.160.0, offline against the simulator", () => {
  it("lists the pinned CLI among the engines", async () => {
    const engines = (await call(base, "GET", "/accounts")).body.engines;
    expect(engines.find((e: { engine: string }) => e.engine === "engine_b")).toMatchObject({ versionFound: "0.160.0", versionNeeded: "0.160.0", available: true });
  });

  it("answers a text turn, then resumes the same codex thread on the next turn", async () => {
    const id = await spawn();
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "hello" })).body).toMatchObject({ outcome: "completed", reply: { text: "echo: hello" } });
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "again" })).body.reply.text).toBe("echo: again");
    const requests = ((await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: { path: string; headers: Record<string, string>; body: any }[] }).requests;
    const last = requests.filter((r) => r.path === "/v1/responses").at(-1)!;
    expect(JSON.stringify(last.body.input)).toMatch(/hello.*echo: hello.*again/s);
    // A placeholder credential only.
    expect(last.headers.authorization).toBe("Bearer placeholder-not-a-key");
  });

  it("maps command approvals to the runtime's: allowed runs, denied does not", async () => {
    for (const decision of ["allow", "deny"] as const) {
      const id = await spawn();
      const file = `codex-${decision}.txt`;
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: `touch ${file}` } } }) });
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision })).status).toBe(200);
      await waitFor(async () => !(await call(base, "GET", `/threads/${id}/turn`)).body.running);
      expect(existsSync(join(work, file))).toBe(decision === "allow");
      const events = await log(id);
      expect(events.find((e) => e.kind === "tool-call")?.body).toMatchObject({ name: "exec_command" });
      expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ isError: decision === "deny" });
      expect(events.at(-1)?.kind).toBe("turn-ended");
    }
  });

  it("prices usage from the model catalog, and reports usd null for a model without a price", async () => {
    const priced = await spawn({ permissions: "allow" });
    expect((await call(base, "POST", `/threads/${priced}/send`, { text: sim({ usage: { input: 1_000_000, output: 500_000 } }, "priced") })).body.outcome).toBe("completed");
    // gpt-sim is one of the simulator's models: $1 per million input tokens, $2 per million output.
    expect((await log(priced)).find((e) => e.kind === "usage")?.body).toMatchObject({ inputTokens: 1_000_000, outputTokens: 500_000, usd: 2 });
    expect((await call(base, "GET", `/threads/${priced}`)).body.cost.usd).toBe(2);
    const unpriced = await spawn({ model: "sim-unpriced", permissions: "allow" });
    expect((await call(base, "POST", `/threads/${unpriced}/send`, { text: "hi" })).body.outcome).toBe("completed");
    expect((await log(unpriced)).find((e) => e.kind === "usage")?.body.usd).toBeNull();
    expect((await call(base, "GET", `/threads/${unpriced}`)).body.cost).toMatchObject({ usd: 0, unpricedCalls: 1 });
  });

  it("denies every call under deny: the call is made and refused", async () => {
    const id = await spawn({ permissions: "deny" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "ls" } } }) });
    expect(r.body.outcome).toBe("completed");
    const events = await log(id);
    expect(events.some((e) => e.kind === "approval-request")).toBe(false);
    const callId = events.find((e) => e.kind === "tool-call")?.body.callId;
    expect(callId).toBeDefined();
    expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ callId, isError: true });
  });

  it("asks before a read-only command under ask", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "ls" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    expect((await log(id)).some((e) => e.kind === "tool-result")).toBe(false);
    await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended"));
  });

  it("handles text with parallel calls in one message, each its own call and result", async () => {
    const id = await spawn({ permissions: "allow" });
    const tools = [
      { name: "shell", input: { command: "echo first" } },
      { name: "shell", input: { command: "echo second" } },
    ];
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ say: "Two at once.", tools, reply: "both seen" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "both seen" } });
    const events = await log(id);
    expect(events.filter((e) => e.kind === "tool-result").map((e) => e.body.output).join("|")).toMatch(/first.*\|.*second|second.*\|.*first/s);
    expect(events.filter((e) => e.kind === "reply").map((e) => e.body.text)).toContain("both seen");
  });

  it("asks a separate approval for each of two parallel calls under ask, decided in any order", async () => {
    const id = await spawn();
    const tools = [
      { name: "shell", input: { command: "echo one" } },
      { name: "shell", input: { command: "echo two" } },
    ];
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tools, reply: "both asked" }) });
    const decided: string[] = [];
    for (const decision of ["deny", "allow"] as const) {
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals.find((a: string) => !decided.includes(a)));
      decided.push(approvalId);
      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision })).status).toBe(200);
    }
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended"));
    const events = await log(id);
    expect(events.filter((e) => e.kind === "approval-request")).toHaveLength(2);
    expect(events.filter((e) => e.kind === "tool-result").map((e) => e.body.isError).sort()).toEqual([false, true]);
  });

  it("never shows reasoning as the reply, and sends the reasoning item back with its call", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ reasoning: "private thoughts", tool: { name: "shell", input: { command: "true" } }, reply: "answered" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "answered" } });
    expect((await log(id)).filter((e) => e.kind === "reply").map((e) => e.body.text).join("\n")).not.toContain("private thoughts");
  });

  it("ends a turn the output limit cut, saying so", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ reply: "half an ans", stop: "length" }) });
    const events = await log(id);
    expect(r.body.outcome, JSON.stringify(events.map((e) => [e.kind, e.body]))).toBe("completed");
    expect(events.find((e) => e.kind === "turn-ended")?.body).toMatchObject({ stop: "length" });
  });

  it("turns codex's request_user_input into a runtime question: answered, dismissed, or continued without an answer", async () => {
    for (const [action, body] of Object.entries({ answer: { answer: "the blue one" }, dismiss: {}, continue: {} })) {
      const id = await spawn({ permissions: "deny" });
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ ask: "Which one?" }) });
      const requestId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.questions[0]);
      expect((await log(id)).find((e) => e.kind === "question")?.body.question).toContain("Which one?");
      expect((await call(base, "POST", `/threads/${id}/questions/${requestId}/${action}`, body)).status).toBe(200);
      await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-ended" || e.kind === "turn-failed"));
      const events = await log(id);
      expect(events.find((e) => e.kind === "turn-ended"), JSON.stringify(events.at(-1))).toBeDefined();
      const reply = events.filter((e) => e.kind === "reply").at(-1)?.body.text;
      if (action === "answer") expect(reply).toContain("the blue one");
      else expect(reply).not.toContain("the blue one");
    }
  });

  it("interrupts a running turn with turn/interrupt", async () => {
    const id = await spawn();
    const stream = await openFollow(base, `/threads/${id}/stream`);
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 20, delayMs: 300 }, "long") });
    // Interrupted once its reply has begun, not merely once it started.
    await until(() => stream.frames.some((f) => f.startsWith("event: delta")));
    stream.close();
    expect((await call(base, "POST", `/threads/${id}/interrupt`)).body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    // codex drops the interrupted reply from its history, so the echo also covers "long".
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "after" })).body.reply.text).toMatch(/^echo: [\s\S]*after$/);
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

  it("refuses engine_b spawns, and fails engine_b turns, when SERVICE_ENGINE_B_BIN is not the pinned release", async () => {
    const id = await spawn();
    await front.stop();
    front = await startFront({ dataDir: front.dataDir, env: { SERVICE_AGENTS_PORT: port, SERVICE_ENGINE_B_BIN: "/bin/echo" } });
    const spawned = await call(base, "POST", "/spawn", { engine: "engine_b", model: "gpt-sim" });
    expect(spawned.status).toBe(503);
    expect(spawned.body).toMatchObject({ code: "engine-unavailable", engine: { binary: "/bin/echo", versionNeeded: "0.160.0", available: false } });
    const turn = await call(base, "POST", `/threads/${id}/send`, { text: "hi" });
    expect(turn.body).toMatchObject({ outcome: "failed", failure: { class: "engine-unavailable" } });
    expect((await call(base, "POST", "/spawn", { model: "sim-1" })).status).toBe(201);
  });
});
