import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim, waitFor, type LoggedEvent } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-tools-"));
afterAll(() => removeDir(work));

const front = useFront();

async function spawn(spec: Record<string, unknown>): Promise<string> {
  const res = await call(front().url, "POST", "/spawn", { cwd: work, permissions: "ask", ...spec });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.threadId as string;
}

/** A tool's calls and results in a thread's log, whatever the engine named it (`delegate`, `mcp__runtime__delegate`). */
function toolEvents(log: LoggedEvent[], tool: string): LoggedEvent[] {
  return log.filter((e) => (e.kind === "tool-call" || e.kind === "tool-result") && String(e.body.name).replace(/^mcp__runtime__/, "") === tool);
}

async function settled(thread: string, operation: string): Promise<any> {
  return waitFor(async () => {
    const o = (await call(front().url, "GET", `/threads/${thread}/operations/${operation}`)).body;
    return o.state !== "open" ? o : null;
  }, 30_000);
}

describe.each(EVERY_ENGINE)("the runtime's tools on %s", (engine, spec) => {
  it("delegate: the model's call starts the same delegation the route does, on its seat's engine and model, under the parent's permissions, with no approval", async () => {
    const base = front().url;
    const parent = await spawn(spec);
    const sent = await call(base, "POST", `/threads/${parent}/send`, {
      text: sim({ tool: { name: "delegate", input: { title: "look it up", prompt: `find it on ${engine}` } }, reply: "delegated" }),
    });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const log = await events(base, parent);
    const started = log.find((e) => e.kind === "operation-started")!;
    expect(started.body).toMatchObject({ kind: "delegation", title: "look it up", detail: { turnId: sent.body.turnId, seat: "main" } });
    const [, result] = toolEvents(log, "delegate");
    expect(result!.body).toMatchObject({ isError: false, output: expect.stringContaining(started.body.operation) });
    expect(log.some((e) => e.kind === "approval-request")).toBe(false);
    // The child may do no more than its parent.
    const child = (await call(base, "GET", `/threads/${started.body.child}`)).body;
    expect(child).toMatchObject({ parent, engine, model: spec.model, role: "worker", spec: { permissions: "ask" } });
    expect((await settled(parent, started.body.operation)).outcome).toMatchObject({ status: "completed", result: `echo: find it on ${engine}`, by: "child" });
    await waitFor(async () => (await events(base, parent)).find((e) => e.kind === "message" && e.body.from === `operation:${started.body.operation}`));
  });

  it("report_milestone and report_outcome: a delegated child reports on its operation in the parent, and its outcome wins over its turn's end", async () => {
    const base = front().url;
    const parent = await spawn({ model: "sim-1" });
    const delegate = async (prompt: string) => {
      const started = await call(base, "POST", `/threads/${parent}/operations`, { kind: "delegation", title: "compute", prompt, spec: { ...spec, permissions: "ask" } });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return started.body as { operation: string; child: string };
    };
    const halfway = await delegate(sim({ tool: { name: "report_milestone", input: { text: "half way" } }, reply: "done" }));
    const withMilestone = await settled(parent, halfway.operation);
    expect(withMilestone.milestones).toMatchObject([{ text: "half way" }]);
    expect(withMilestone.outcome).toMatchObject({ status: "completed", result: "done", by: "child" });
    // The turn completes, but the outcome the model reported is the operation's, once.
    const failing = await delegate(sim({ tool: { name: "report_outcome", input: { status: "failed", error: "the input was not there" } }, reply: "gave up" }));
    expect((await settled(parent, failing.operation)).outcome).toEqual({ status: "failed", error: "the input was not there", by: "child" });
    await waitFor(async () => (await events(base, failing.child)).some((e) => e.kind === "turn-ended"));
    const childLog = await events(base, failing.child);
    expect(toolEvents(childLog, "report_outcome").at(-1)!.body.isError).toBe(false);
    // Settled once the turn ended, not before: the child may still have been working.
    const settledAt = (await events(base, parent)).find((e) => e.kind === "operation-settled" && e.body.operation === failing.operation)!;
    expect(Date.parse(settledAt.ts)).toBeGreaterThanOrEqual(Date.parse(childLog.find((e) => e.kind === "turn-ended")!.ts));
    // Its outcome given, the child is offered the report tools no more (the simulator refuses a tool not offered).
    const later = await call(base, "POST", `/threads/${failing.child}/send`, { text: sim({ tool: { name: "report_outcome", input: { status: "completed" } } }) });
    expect(later.body.failure?.error).toMatch(/report_outcome.{0,4} is not offered/);
    const parentLog = await events(base, parent);
    expect(parentLog.filter((e) => e.kind === "operation-settled" && e.body.operation === failing.operation)).toHaveLength(1);
    await waitFor(async () => (await events(base, parent)).filter((e) => e.kind === "message" && e.body.from === `operation:${failing.operation}`).length === 1);
  });

  it("offer_handoff: the seat that holds the thread offers it, recorded as the engine's, and the model reads what came of it", async () => {
    const base = front().url;
    const id = await spawn(spec);
    await call(base, "POST", `/threads/${id}/seats`, { name: "reviewer", model: "sim-2", role: "reviewer" });
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "offer_handoff", input: { to: "reviewer", note: "please review" } }, reply: "handed" }) });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const log = await events(base, id);
    const offered = log.find((e) => e.kind === "handoff-offered")!;
    expect(offered.body).toEqual({ from: "main", to: "reviewer", note: "please review", context: "full", offeredBy: "engine", turnId: sent.body.turnId });
    expect(toolEvents(log, "offer_handoff").at(-1)!.body.output).toContain(`offer ${offered.seq}`);
    expect(log.some((e) => e.kind === "approval-request")).toBe(false);
    // A refusal is the tool's error result, in the runtime's words; the turn goes on.
    const again = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "offer_handoff", input: { to: "reviewer" } }, reply: "again" }) });
    expect(again.body.outcome).toBe("completed");
    expect(toolEvents(await events(base, id), "offer_handoff").at(-1)!.body).toMatchObject({ isError: true, output: expect.stringContaining("handoff-pending") });
    expect((await call(base, "POST", `/threads/${id}/handoffs/${offered.seq}/accept`)).body.state).toBe("accepted");
    expect((await call(base, "GET", `/threads/${id}/seats`)).body.holder).toBe("reviewer");
  });
});

describe("the runtime's tools, as each turn is offered them", () => {
  it("subscribe: a model watches its own family (a child, its parent), delivered to its seat; nothing else", async () => {
    const base = front().url;
    const id = await spawn({ model: "sim-1" });
    const { child } = (await call(base, "POST", `/threads/${id}/operations`, { kind: "delegation", title: "watched", prompt: "hello" })).body;
    // The child's result wakes this thread; the scripted message must not share that wake's turn, where the wake would be the newest message.
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/operations`)).body.operations[0]?.state !== "open");
    await waitFor(async () => {
      const turn = (await call(base, "GET", `/threads/${id}/turn`)).body;
      return !turn.running && turn.queued === 0 && (await events(base, id)).some((e) => e.kind === "turn-ended");
    });
    const stranger = await spawn({ model: "sim-1" });
    const sent = await call(base, "POST", `/threads/${id}/send`, {
      text: sim({ tool: { name: "subscribe", input: { watch: { thread: child }, filter: { kinds: ["reply"], text: "deploy-done" }, note: "tell me" } }, reply: "watching" }),
    });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const [subscription] = (await call(base, "GET", `/threads/${id}/subscriptions`)).body.subscriptions;
    expect(subscription, JSON.stringify(toolEvents(await events(base, id), "subscribe"))).toMatchObject({ target: { thread: child }, filter: { kinds: ["reply"], text: "deploy-done" }, note: "tell me", deliver: { seat: "main" } });
    await call(base, "POST", `/threads/${child}/send`, { text: sim({ reply: "deploy-done at last" }) });
    const wake = await waitFor(async () => (await events(base, id)).find((e) => e.kind === "message" && e.body.from === `watch:${subscription.watch}`));
    expect(wake.body.text).toContain("deploy-done at last");
    // A thread outside its family, or a whole workspace, is a caller's to watch, not a model's.
    for (const watch of [{ thread: stranger }, { workspace: "default" }]) {
      await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "subscribe", input: { watch } }, reply: "tried" }) });
      expect(toolEvents(await events(base, id), "subscribe").at(-1)!.body).toMatchObject({ isError: true, output: expect.stringContaining("watch-out-of-scope") });
    }
    expect((await call(base, "GET", `/threads/${id}/subscriptions`)).body.subscriptions).toHaveLength(1);
  });

  it("delegate: a thread three parents deep does the work itself", async () => {
    const base = front().url;
    let id = await spawn({ model: "sim-1" });
    await call(base, "POST", `/threads/${id}/send`, { text: "root" });
    for (let i = 0; i < 3; i++) id = (await call(base, "POST", `/threads/${id}/fork`, { atSeq: 1 })).body.threadId;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "delegate", input: { title: "deeper", prompt: "p" } }, reply: "ok" }) });
    expect(toolEvents(await events(base, id), "delegate").at(-1)!.body).toMatchObject({ isError: true, output: expect.stringContaining("delegation-too-deep") });
    expect((await call(base, "GET", `/threads/${id}/operations`)).body.operations).toEqual([]);
  });

  it("offers the report tools only to a delegated thread, and offer_handoff only to the holder with seats to hand to", async () => {
    const base = front().url;
    const id = await spawn({ model: "sim-1" });
    // The simulator refuses a call to a tool the request does not offer, as a provider would.
    for (const name of ["report_outcome", "report_milestone", "offer_handoff"]) {
      const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name, input: { text: "x", status: "completed", to: "main" } } }) });
      expect([name, sent.body.outcome]).toEqual([name, "failed"]);
      expect(sent.body.failure.error).toContain(`tool "${name}" is not offered`);
    }
  });

  it("answers a bad input as the tool's error, naming the field", async () => {
    const base = front().url;
    const id = await spawn({ model: "sim-1" });
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "delegate", input: { title: "no prompt" } }, reply: "ok" }) });
    expect(sent.body.outcome).toBe("completed");
    const result = toolEvents(await events(base, id), "delegate").at(-1)!;
    expect(result.body).toMatchObject({ isError: true, output: expect.stringContaining("prompt") });
    expect((await call(base, "GET", `/threads/${id}/operations`)).body.operations).toEqual([]);
  });
});
