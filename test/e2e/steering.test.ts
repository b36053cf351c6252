import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-steering-"));
afterAll(() => removeDir(work));

const front = useFront();

/** A thread whose turn (of seat `on`, joined first, when given) waits on an approval for a tool call, so a message can reach it mid-turn. */
async function waitingTurn(spec: Record<string, unknown>, on?: { name: string; model: string }): Promise<{ id: string; approvalId: string; turnId: string }> {
  const base = front().url;
  const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask" })).body.threadId as string;
  if (on) await call(base, "POST", `/threads/${id}/seats`, on);
  await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo working" } } }, "start the work"), ...(on ? { seat: on.name } : {}) });
  const turn = await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return t.waitingOn.approvals[0] ? t : null;
  });
  return { id, approvalId: turn.waitingOn.approvals[0], turnId: turn.turn.turnId };
}

describe.each(EVERY_ENGINE)("steering a running turn (%s)", (_engine, spec) => {
  it("joins the message to the running turn, which answers it, and lists it as taken", async () => {
    const base = front().url;
    const { id, approvalId, turnId } = await waitingTurn(spec);
    const sent = await call(base, "POST", `/threads/${id}/messages`, { text: "steer-marker change of plan", onBusy: "steer" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const seq = sent.body.seq as number;
    await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    await waitFor(async () => (await events(base, id)).some((e) => e.kind === "turn-ended" || e.kind === "turn-failed"));
    const log = await events(base, id);
    expect(log.filter((e) => e.kind === "turn-started")).toHaveLength(1);
    expect(log.find((e) => e.kind === "steered")?.body).toEqual({ target: seq, turnId, taken: true });
    expect(log.find((e) => e.kind === "turn-ended"), JSON.stringify(log.at(-1))).toBeDefined();
    // The model's call after the steer read it.
    expect(log.filter((e) => e.kind === "reply").map((e) => e.body.text).join("\n")).toContain("steer-marker change of plan");
    const steering = (await call(base, "GET", `/threads/${id}/steering`)).body.steering;
    expect(steering).toEqual([{ seq, turnId, taken: true, reason: null, resolvedSeq: log.find((e) => e.kind === "steered")!.seq }]);
    // The next turn sends a transcript the provider takes, the steering message in it.
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "and after that?" });
    expect(next.body.outcome, JSON.stringify(next.body.failure)).toBe("completed");
  });
});

describe("a steering message that cannot steer", () => {
  it("is an ordinary message when no turn runs", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-1" })).body.threadId as string;
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: "idle", onBusy: "steer" });
    expect(sent.body.reply.text).toBe("echo: idle");
    expect((await call(base, "GET", `/threads/${id}/steering`)).body.steering).toEqual([]);
  });

  it("waits for its seat's turn when it names another seat than the running one", async () => {
    const base = front().url;
    const { id, approvalId } = await waitingTurn({ model: "sim-1" });
    await call(base, "POST", `/threads/${id}/seats`, { name: "other", model: "sim-2" });
    await call(base, "POST", `/threads/${id}/messages`, { text: "for other", seat: "other", onBusy: "steer" });
    await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    await waitFor(async () => (await events(base, id)).filter((e) => e.kind === "turn-ended").length === 2);
    expect((await events(base, id)).filter((e) => e.kind === "turn-started").map((e) => e.body.seat)).toEqual(["main", "other"]);
    expect((await call(base, "GET", `/threads/${id}/steering`)).body.steering).toEqual([]);
  });

  it("steers only the seat whose turn runs: naming no seat, it is for the holder", async () => {
    const base = front().url;
    const { id, approvalId } = await waitingTurn({ model: "sim-1" }, { name: "worker", model: "sim-2" });
    await call(base, "POST", `/threads/${id}/messages`, { text: "for the holder", onBusy: "steer" });
    expect((await call(base, "GET", `/threads/${id}/turn`)).body.queued).toBe(1);
    await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" });
    await waitFor(async () => (await events(base, id)).filter((e) => e.kind === "turn-ended").length === 2);
    expect((await events(base, id)).filter((e) => e.kind === "turn-started").map((e) => e.body.seat)).toEqual(["worker", "main"]);
    expect((await call(base, "GET", `/threads/${id}/steering`)).body.steering).toEqual([]);
  });

  it("goes to the next turn when the turn ends before the engine takes it", async () => {
    const base = front().url;
    const { id, approvalId, turnId } = await waitingTurn({ model: "sim-1" });
    const seq = (await call(base, "POST", `/threads/${id}/messages`, { text: "too late", onBusy: "steer" })).body.seq as number;
    // Interrupted at the approval: the agent never makes the call that would read the message.
    expect((await call(base, "POST", `/threads/${id}/interrupt`)).body.outcome).toBe("failed");
    await waitFor(async () => (await events(base, id)).some((e) => e.kind === "turn-ended"));
    const log = await events(base, id);
    expect(log.find((e) => e.kind === "steered")?.body).toEqual({ target: seq, turnId, taken: false, reason: "the turn ended before the engine took it" });
    expect(log.filter((e) => e.kind === "turn-started").at(-1)?.body.inputs).toEqual([seq]);
    expect(log.filter((e) => e.kind === "reply").at(-1)?.body.text).toBe("echo: too late");
    expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" })).body.code).toBe("approval-closed");
  });
});
