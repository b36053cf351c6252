import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, FAULT_CLASSES, sim, waitFor } from "../support/http.js";
import { openFollow, until } from "../support/sse.js";

let front: Front;
let base: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-cwd-"));

beforeAll(async () => {
  // A secret in the front's environment that no tool may see.
  front = await startFront({ env: { SERVICE_CANARY_SECRET: "canary-7d1f" } });
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const log = (id: string) => events(base, id);

async function idle(id: string): Promise<void> {
  await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return !t.running && t.queued === 0;
  });
}

async function pending(id: string, kind: "approvals" | "questions"): Promise<string> {
  return waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn[kind][0]);
}

describe("a turn through the real front, the simulator and pi", () => {
  it("answers with the echo, streams its deltas live, and counts usage and cost", async () => {
    const id = await spawn();
    const stream = await openFollow(base, `/threads/${id}/stream`);
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ chunks: 4, delayMs: 20 }, "hello world") });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ seq: 2, outcome: "completed", failure: null, reply: { text: "echo: hello world" } });
    await until(() => stream.frames.filter((f) => f.startsWith("event: delta")).length >= 4);
    const deltas = stream.frames
      .filter((f) => f.startsWith("event: delta"))
      .map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)))
      .filter((d) => d.type === "text");
    expect(deltas.map((d) => d.delta).join("")).toBe("echo: hello world");
    expect(deltas[0].turnId).toBe(sent.body.turnId);
    stream.close();
    const kinds = (await log(id)).map((e) => e.kind);
    expect(kinds).toEqual(["spawn", "message", "turn-started", "reply", "usage", "turn-ended"]);
    const row = (await call(base, "GET", `/threads/${id}`)).body;
    expect(row.cost.inputTokens).toBeGreaterThan(0);
    expect(row.cost.outputTokens).toBeGreaterThan(0);
    expect(row.cost.usd).toBeGreaterThan(0);
    expect(row.stage).toBe("idle");
  });

  it("accepts a message with 202 before any model runs, and async send acts the same", async () => {
    const id = await spawn();
    const a = await call(base, "POST", `/threads/${id}/messages`, { text: sim({ delayMs: 300 }, "slow") });
    expect(a.status).toBe(202);
    // The answer came before the model's (300 ms away): the turn runs on after it.
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.running);
    const b = await call(base, "POST", `/threads/${id}/send`, { text: "later", async: true });
    expect(b.status).toBe(202);
    expect(b.body.seq).toBeGreaterThan(a.body.seq);
    await idle(id);
  });

  it("queues messages that arrive during a turn and answers them in order in the next turn", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 3, delayMs: 150 }, "first") });
    // Until its turn-started event, a turn may still take messages that come in: these must come mid-turn.
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.running);
    const b = await call(base, "POST", `/threads/${id}/messages`, { text: "second" });
    const c = await call(base, "POST", `/threads/${id}/messages`, { text: "third" });
    expect((await call(base, "GET", `/threads/${id}/turn`)).body.queued).toBe(2);
    await idle(id);
    const events = await log(id);
    expect(events.filter((e) => e.kind === "turn-started").map((e) => e.body.inputs)).toEqual([[2], [b.body.seq, c.body.seq]]);
    expect(events.filter((e) => e.kind === "reply").map((e) => e.body.text)).toEqual(["echo: first", "echo: second\nthird"]);
  });

  it("interrupts a running turn with class interrupted, and refuses an interrupt when none runs", async () => {
    const id = await spawn();
    const stream = await openFollow(base, `/threads/${id}/stream`);
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 10, delayMs: 500 }, "long") });
    // Interrupted once the reply has begun: the partial reply then stands in the transcript
    // after "long", and the next turn answers "after" alone (before it, the two user texts
    // would be one turn's input).
    await until(() => stream.frames.some((f) => f.startsWith("event: delta")));
    stream.close();
    const stopped = await call(base, "POST", `/threads/${id}/interrupt`);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    const failed = (await log(id)).find((e) => e.kind === "turn-failed");
    expect(failed?.body.class).toBe("interrupted");
    const again = await call(base, "POST", `/threads/${id}/interrupt`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("no-turn-running");
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "after" });
    expect(next.body.reply.text).toBe("echo: after");
  });
});

describe("approvals", () => {
  const marker = (name: string) => join(work, name);

  it("runs the command once allowed, lists the approval while it waits, and closes it", async () => {
    const id = await spawn({ cwd: work });
    const command = "echo approved > allowed.txt && echo done";
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command } } }) });
    const approvalId = await pending(id, "approvals");
    const listed = (await call(base, "GET", "/workspaces/default/approvals")).body.approvals;
    expect(listed).toContainEqual(expect.objectContaining({ approvalId, threadId: id, name: "shell", input: { command } }));
    expect((await call(base, "GET", `/threads/${id}`)).body.stage).toBe("waiting");
    expect(existsSync(marker("allowed.txt"))).toBe(false);
    const allowed = await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    expect(allowed.status).toBe(200);
    await idle(id);
    expect(readFileSync(marker("allowed.txt"), "utf8")).toBe("approved\n");
    const events = await log(id);
    const result = events.find((e) => e.kind === "tool-result");
    expect(result?.body).toMatchObject({ name: "shell", isError: false, output: expect.stringContaining("done") });
    expect(events.filter((e) => e.kind === "reply").at(-1)?.body.text).toContain("tool shell returned: exit code 0");
    const second = await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "deny" });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ code: "approval-closed", decision: "allow" });
    const listedAfter = (await call(base, "GET", "/workspaces/default/approvals")).body.approvals;
    expect(listedAfter.map((a: { approvalId: string }) => a.approvalId)).not.toContain(approvalId);
  });

  it("does not run a denied command, and tells the model", async () => {
    const id = await spawn({ cwd: work });
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "touch denied.txt" } } }) });
    const approvalId = await pending(id, "approvals");
    expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "deny" })).status).toBe(200);
    await idle(id);
    expect(existsSync(marker("denied.txt"))).toBe(false);
    const result = (await log(id)).find((e) => e.kind === "tool-result");
    expect(result?.body).toMatchObject({ isError: true, output: expect.stringContaining("denied") });
  });

  it("runs without asking under allow, and refuses without asking under deny", async () => {
    const allowId = await spawn({ cwd: work, permissions: "allow" });
    await call(base, "POST", `/threads/${allowId}/send`, { text: sim({ tool: { name: "shell", input: { command: "touch free.txt" } } }) });
    expect(existsSync(marker("free.txt"))).toBe(true);
    const denyId = await spawn({ cwd: work, permissions: "deny" });
    await call(base, "POST", `/threads/${denyId}/send`, { text: sim({ tool: { name: "shell", input: { command: "touch never.txt" } } }) });
    expect(existsSync(marker("never.txt"))).toBe(false);
    for (const id of [allowId, denyId]) expect((await log(id)).some((e) => e.kind === "approval-request")).toBe(false);
    // The model made the call, and the runtime refused it: a refusal, not silence.
    const denied = await log(denyId);
    const callId = denied.find((e) => e.kind === "tool-call")?.body.callId;
    expect(callId).toBeDefined();
    expect(denied.find((e) => e.kind === "tool-result")?.body).toMatchObject({ callId, isError: true, output: expect.stringContaining('permissions are "deny"') });
  });

  it("runs commands without the front's secrets in their environment", async () => {
    const id = await spawn({ cwd: work, permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "env" } } }) });
    expect(r.body.reply.text).toContain("PATH=");
    expect(JSON.stringify(await log(id))).not.toContain("canary-7d1f");
  });

  it("writes, edits and reads files in the thread's cwd with the file tools", async () => {
    const id = await spawn({ cwd: work, permissions: "allow" });
    const use = (name: string, input: Record<string, unknown>) => call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name, input } }) });
    await use("write_file", { path: "notes/a.txt", content: "one two three" });
    expect(readFileSync(marker("notes/a.txt"), "utf8")).toBe("one two three");
    await use("edit_file", { path: "notes/a.txt", oldText: "two", newText: "2" });
    expect(readFileSync(marker("notes/a.txt"), "utf8")).toBe("one 2 three");
    const read = await use("read_file", { path: "notes/a.txt" });
    expect(read.body.reply.text).toBe("tool read_file returned: one 2 three");
    const ambiguous = await use("edit_file", { path: "notes/a.txt", oldText: "e", newText: "E" });
    expect(ambiguous.body.reply.text).toContain("occurs 3 times");
  });

  it("keeps the loop's sender for loops", async () => {
    const id = await spawn();
    const r = await call(base, "POST", `/threads/${id}/messages`, { text: "x", from: "loop" });
    expect(r.status).toBe(400);
  });

  it("answers 404 for an unknown approval and 400 for a decision other than allow or deny", async () => {
    const id = await spawn();
    const unknown = await call(base, "POST", `/threads/${id}/approvals/appr_nope`, { decision: "allow" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("approval-not-found");
    const bad = await call(base, "POST", `/threads/${id}/approvals/appr_nope`, { decision: "maybe" });
    expect(bad.status).toBe(400);
  });
});

describe("questions", () => {
  async function ask(): Promise<{ id: string; requestId: string }> {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ ask: "Which colour?" }) });
    const requestId = await pending(id, "questions");
    return { id, requestId };
  }

  it("shows an open question and hands the answer to the model", async () => {
    const { id, requestId } = await ask();
    const open = await call(base, "GET", `/threads/${id}/questions/${requestId}`);
    expect(open.body).toMatchObject({ requestId, question: "Which colour?", status: "open", answer: null });
    const listed = (await call(base, "GET", "/workspaces/default/questions")).body.questions;
    expect(listed).toContainEqual(expect.objectContaining({ requestId, threadId: id }));
    const answered = await call(base, "POST", `/threads/${id}/questions/${requestId}/answer`, { answer: "blue" });
    expect(answered.body).toMatchObject({ status: "answered", answer: "blue" });
    await idle(id);
    expect((await log(id)).filter((e) => e.kind === "reply").at(-1)?.body.text).toBe("you answered: blue");
    const twice = await call(base, "POST", `/threads/${id}/questions/${requestId}/answer`, { answer: "red" });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe("question-closed");
  });

  it("ends the turn without another model call when the question is dismissed", async () => {
    const { id, requestId } = await ask();
    expect((await call(base, "POST", `/threads/${id}/questions/${requestId}/dismiss`)).body.status).toBe("dismissed");
    await idle(id);
    const events = await log(id);
    expect(events.filter((e) => e.kind === "reply")).toEqual([]);
    expect(events.at(-1)?.kind).toBe("turn-ended");
  });

  it("lets the model continue without an answer", async () => {
    const { id, requestId } = await ask();
    expect((await call(base, "POST", `/threads/${id}/questions/${requestId}/continue`)).body.status).toBe("continued");
    await idle(id);
    expect((await log(id)).filter((e) => e.kind === "reply").at(-1)?.body.text).toContain("continue without answering");
  });

  it("answers 404 for an unknown question", async () => {
    const id = await spawn();
    const r = await call(base, "GET", `/threads/${id}/questions/req_nope`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("question-not-found");
  });
});

describe("failure classes", () => {

  for (const model of ["sim-1", "gpt-sim", "claude-sim"]) {
    it(`records each simulated provider fault with its class (${model})`, async () => {
      const started = Date.now();
      for (const [fail, cls] of FAULT_CLASSES) {
        const id = await spawn({ engine: "pi", model });
        const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ fail }) });
        expect(r.body.outcome, `${fail} on ${model}`).toBe("failed");
        expect(r.body.failure.class, `${fail} on ${model}: ${r.body.failure.error}`).toBe(cls);
        const failed = (await log(id)).find((e) => e.kind === "turn-failed");
        expect(failed?.body).toMatchObject({ class: cls, error: expect.any(String) });
        const next = await call(base, "POST", `/threads/${id}/send`, { text: "fine now" });
        expect(next.body.outcome).toBe("completed");
      }
      const incidents = (await call(base, "GET", `/incidents?since=${started}`)).body.incidents;
      expect(new Set(incidents.map((i: { class: string }) => i.class))).toEqual(new Set(FAULT_CLASSES.map(([, c]) => c)));
    });
  }

  it("fails over on quota to the next model of the chain, and retries the same messages there", async () => {
    const id = await spawn({ model: "sim-1", fallback: ["sim-2"] });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ fail: "quota", failFor: ["sim-1"] }, "twice") });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "echo: twice" } });
    const events = await log(id);
    expect(events.map((e) => e.kind).filter((k) => k.startsWith("turn") || k === "failover")).toEqual([
      "turn-started",
      "turn-failed",
      "failover",
      "turn-started",
      "turn-ended",
    ]);
    const failover = events.find((e) => e.kind === "failover")!;
    expect(failover.body).toMatchObject({ class: "quota", from: { engine: "pi", model: "sim-1" }, to: { engine: "pi", model: "sim-2" }, inputs: [r.body.seq] });
    expect(events.filter((e) => e.kind === "turn-started").map((e) => e.body.inputs)).toEqual([[r.body.seq], [r.body.seq]]);
    expect((await call(base, "GET", `/threads/${id}`)).body).toMatchObject({ model: "sim-2", spec: { model: "sim-1" } });
  });

  it("fails over on auth to the next entry on another engine, and never on model-not-found", async () => {
    const id = await spawn({ model: "sim-1", fallback: ["sim-3", { engine: "engine_a", model: "claude-sim" }] });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ fail: "auth", failFor: ["sim-1"] }) });
    expect(r.body.outcome).toBe("completed");
    expect((await log(id)).find((e) => e.kind === "failover")?.body).toMatchObject({ class: "auth", to: { engine: "engine_a", model: "claude-sim" } });
    expect((await call(base, "GET", `/threads/${id}`)).body).toMatchObject({ engine: "engine_a", model: "claude-sim" });

    const stays = await spawn({ model: "sim-1", fallback: ["sim-2"] });
    const failed = await call(base, "POST", `/threads/${stays}/send`, { text: sim({ fail: "model-not-found", failFor: ["sim-1"] }) });
    expect(failed.body).toMatchObject({ outcome: "failed", failure: { class: "model-not-found" } });
    expect((await log(stays)).some((e) => e.kind === "failover")).toBe(false);
  });

  it("continues a turn that stalled after a tool result, once, with a nudge the sender waits for", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo ran" } }, stall: true }) });
    expect(r.body.outcome).toBe("completed");
    expect(r.body.reply.text).toContain("Continue");
    const events = await log(id);
    expect(events.find((e) => e.kind === "turn-failed")?.body.class).toBe("stalled");
    const nudge = events.find((e) => e.kind === "message" && e.body.from === "runtime")!;
    expect(events.filter((e) => e.kind === "turn-started").at(-1)?.body.inputs).toEqual([nudge.seq]);
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "x", from: "runtime" })).status).toBe(400);
  });

  it("refuses a fallback chain entry its engine cannot serve", async () => {
    const r = await call(base, "POST", "/spawn", { model: "sim-1", fallback: [{ engine: "engine_b", model: "claude-sim" }] });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: "engine-model-mismatch", index: 0 });
  });

  it("groups failed turns by class and fingerprint with the count of threads hit", async () => {
    const started = Date.now();
    for (let i = 0; i < 3; i++) await call(base, "POST", `/threads/${await spawn()}/send`, { text: sim({ fail: "quota" }) });
    const incidents = (await call(base, "GET", `/incidents?since=${started}`)).body.incidents;
    const quota = incidents.filter((i: { class: string }) => i.class === "quota");
    expect(quota).toHaveLength(1);
    expect(quota[0]).toMatchObject({ failures: 3, threads: 3 });
    expect((await call(base, "GET", "/incidents?since=yesterday")).status).toBe(400);
  });
});

describe("fork", () => {
  it("continues the parent as it stood at atSeq, with the parent's history as its context", async () => {
    const parent = await spawn();
    const first = await call(base, "POST", `/threads/${parent}/send`, { text: "alpha" });
    await call(base, "POST", `/threads/${parent}/send`, { text: "beta" });
    const forked = await call(base, "POST", `/threads/${parent}/fork`, { atSeq: first.body.reply.seq, title: "child" });
    expect(forked.status).toBe(201);
    const child = forked.body.threadId;
    const row = (await call(base, "GET", `/threads/${child}`)).body;
    expect(row).toMatchObject({ parent, forkedAtSeq: first.body.reply.seq, title: "child" });
    const forkEvent = (await log(child)).find((e) => e.kind === "fork");
    expect(forkEvent?.body.transcript).toEqual([
      { role: "user", text: "alpha" },
      { role: "assistant", text: "echo: alpha" },
    ]);
    await fetch(`${front.simulatorUrl}/_sim/requests`, { method: "DELETE" });
    const reply = await call(base, "POST", `/threads/${child}/send`, { text: "gamma" });
    expect(reply.body.reply.text).toBe("echo: gamma");
    const seen = (await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: { body: { messages: { role: string; content: unknown }[] } }[] };
    const texts = seen.requests.at(-1)!.body.messages.filter((m) => m.role !== "system").map((m) => m.content);
    expect(JSON.stringify(texts)).toMatch(/alpha.*echo: alpha.*gamma/s);
    expect(JSON.stringify(texts)).not.toContain("beta");
    const children = (await call(base, "GET", `/threads?parent=${parent}`)).body.threads;
    expect(children.map((t: { id: string }) => t.id)).toEqual([child]);
    const beyond = await call(base, "POST", `/threads/${parent}/fork`, { atSeq: 9999 });
    expect(beyond.status).toBe(400);
  });
});

describe("loops", () => {
  it("repeats the prompt as turns until maxTurns, then reports why it stopped", async () => {
    const id = await spawn();
    const started = await call(base, "POST", `/threads/${id}/loop`, { prompt: "tick", maxTurns: 3 });
    expect(started.status).toBe(202);
    const loop = await waitFor(async () => {
      const l = (await call(base, "GET", `/threads/${id}/loop`)).body.loop;
      return l.status !== "running" && l;
    });
    expect(loop).toMatchObject({ status: "finished", reason: "max-turns", done: 3 });
    await idle(id);
    expect((await log(id)).filter((e) => e.kind === "reply").map((e) => e.body.text)).toEqual(["echo: tick", "echo: tick", "echo: tick"]);
    const more = await call(base, "POST", `/threads/${id}/loop/continue`, { turns: 1 });
    expect(more.status).toBe(202);
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/loop`)).body.loop.status === "finished");
    expect((await call(base, "GET", `/threads/${id}/loop`)).body.loop.done).toBe(4);
  });

  it("counts a stalled loop turn's nudge as the loop's turn, so the loop goes on", async () => {
    const id = await spawn({ permissions: "allow" });
    const prompt = sim({ tool: { name: "shell", input: { command: "echo tick" } }, stall: true });
    await call(base, "POST", `/threads/${id}/loop`, { prompt, maxTurns: 2 });
    const loop = await waitFor(async () => {
      const l = (await call(base, "GET", `/threads/${id}/loop`)).body.loop;
      return l.status !== "running" && l;
    });
    expect(loop).toMatchObject({ status: "finished", reason: "max-turns", done: 2 });
  });

  it("stops when a reply contains the until text, and on request", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/loop`, { prompt: sim({ reply: "all DONE" }), until: "DONE" });
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/loop`)).body.loop.reason === "until-matched");
    const other = await spawn();
    await call(base, "POST", `/threads/${other}/loop`, { prompt: sim({ delayMs: 100 }, "slow tick"), maxTurns: 100 });
    const again = await call(base, "POST", `/threads/${other}/loop`, { prompt: "x" });
    expect(again.status).toBe(409);
    const stopped = await call(base, "POST", `/threads/${other}/loop/stop`);
    expect(stopped.body).toMatchObject({ status: "stopped", reason: "stopped" });
    await idle(other);
    expect((await call(base, "GET", `/threads/${other}/loop`)).body.loop.done).toBeLessThanOrEqual(2);
    expect((await call(base, "POST", `/threads/${other}/loop/stop`)).status).toBe(409);
  });
});
