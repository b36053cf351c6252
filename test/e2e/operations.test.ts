import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-operations-"));
afterAll(() => removeDir(work));

const front = useFront();

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  return (await call(front().url, "POST", "/spawn", { model: "sim-1", cwd: work, permissions: "allow", ...spec })).body.threadId as string;
}

async function post(path: string, body: unknown, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${front().url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe("operations", () => {
  it("starts one, takes milestones, settles once, and says so", async () => {
    const base = front().url;
    const id = await spawn();
    const started = await post(`/threads/${id}/operations`, { kind: "action", title: "deploy", detail: { target: "staging" } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ operation: expect.stringMatching(/^op_/), state: "open", seq: expect.any(Number) });
    const op = started.body.operation as string;
    const milestone = await post(`/threads/${id}/operations/${op}`, { milestone: { text: "built", data: { artifacts: 3 } } });
    expect(milestone.body).toMatchObject({ operation: op, state: "open" });
    const settled = await post(`/threads/${id}/operations/${op}`, { outcome: { status: "completed", result: { url: "https://staging" } } });
    expect(settled.body).toMatchObject({ operation: op, state: "completed" });
    const again = await post(`/threads/${id}/operations/${op}`, { outcome: { status: "failed", error: "late" } });
    expect([again.status, again.body.code, again.body.state]).toEqual([409, "operation-settled", "completed"]);
    expect((await post(`/threads/${id}/operations/${op}`, { milestone: { text: "after" } })).body.code).toBe("operation-settled");
    const one = (await call(base, "GET", `/threads/${id}/operations/${op}`)).body;
    expect(one).toMatchObject({ kind: "action", title: "deploy", detail: { target: "staging" }, state: "completed", outcome: { status: "completed", result: { url: "https://staging" }, by: "caller" } });
    expect(one.milestones).toEqual([{ seq: milestone.body.seq, ts: expect.any(String), text: "built", data: { artifacts: 3 } }]);
    expect((await call(base, "GET", `/threads/${id}/operations`)).body.operations).toMatchObject([{ operation: op, milestones: 1, state: "completed" }]);
    expect((await events(base, id)).filter((e) => e.kind.startsWith("operation-")).map((e) => e.kind)).toEqual(["operation-started", "operation-milestone", "operation-settled"]);
    expect((await call(base, "GET", `/threads/${id}/operations/op_nope`)).body.code).toBe("operation-not-found");
    expect((await post(`/threads/${id}/operations`, { kind: "action", title: "x", prompt: "no" })).status).toBe(400);
    expect((await post(`/threads/${id}/operations`, { kind: "delegation", title: "x" })).status).toBe(400);
  });

  it("gives exactly one of 50 concurrent outcomes the settlement", async () => {
    const id = await spawn();
    const op = (await post(`/threads/${id}/operations`, { kind: "action", title: "race" })).body.operation as string;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(`/threads/${id}/operations/${op}`, { outcome: { status: i % 2 ? "completed" : "failed" } })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.code === "operation-settled")).toHaveLength(49);
    expect((await events(front().url, id)).filter((e) => e.kind === "operation-settled")).toHaveLength(1);
  });

  it("honours an Idempotency-Key on a start and on a report", async () => {
    const id = await spawn();
    const first = await post(`/threads/${id}/operations`, { kind: "action", title: "once" }, "start-1");
    const replay = await post(`/threads/${id}/operations`, { kind: "action", title: "once" }, "start-1");
    expect([first.status, replay.status, replay.body.operation, replay.body.replayed]).toEqual([201, 200, first.body.operation, true]);
    expect((await post(`/threads/${id}/operations`, { kind: "action", title: "other" }, "start-1")).body.code).toBe("idempotency-conflict");
    const op = first.body.operation as string;
    const m1 = await post(`/threads/${id}/operations/${op}`, { milestone: { text: "half" } }, "m-1");
    const m2 = await post(`/threads/${id}/operations/${op}`, { milestone: { text: "half" } }, "m-1");
    expect([m2.status, m2.body.seq, m2.body.replayed]).toEqual([200, m1.body.seq, true]);
    expect((await events(front().url, id)).filter((e) => e.kind === "operation-milestone")).toHaveLength(1);
  });
});

describe.each(EVERY_ENGINE)("a delegation to a child on %s", (_engine, spec) => {
  it("completes: the child answers, the operation settles with its reply, and the parent wakes", async () => {
    const base = front().url;
    const parent = await spawn();
    const started = await post(`/threads/${parent}/operations`, { kind: "delegation", title: "look it up", prompt: "find the answer", spec: { ...spec, permissions: "allow" } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const { operation, child } = started.body;
    expect((await call(base, "GET", `/threads/${child}`)).body).toMatchObject({ parent, role: "worker", model: spec.model });
    const settled = await waitFor(async () => {
      const o = (await call(base, "GET", `/threads/${parent}/operations/${operation}`)).body;
      return o.state !== "open" ? o : null;
    }, 30_000);
    expect(settled).toMatchObject({ state: "completed", child, outcome: { status: "completed", result: "echo: find the answer", by: "child" } });
    // The wake starts a turn on the parent, which reads the result.
    const wake = await waitFor(async () => (await events(base, parent)).find((e) => e.kind === "message" && e.body.from === `operation:${operation}`));
    expect(wake.body.text).toContain("echo: find the answer");
    await waitFor(async () => (await events(base, parent)).some((e) => e.kind === "turn-started" && e.body.inputs.includes(wake.seq)));
  });
});

describe("a delegation that fails, or waits", () => {
  it("settles failed when the child's turn fails, and the parent wakes with the error", async () => {
    const base = front().url;
    const parent = await spawn();
    const { operation } = (await post(`/threads/${parent}/operations`, { kind: "delegation", title: "doomed", prompt: sim({ fail: "server" }) })).body;
    const settled = await waitFor(async () => {
      const o = (await call(base, "GET", `/threads/${parent}/operations/${operation}`)).body;
      return o.state !== "open" ? o : null;
    }, 30_000);
    expect(settled.outcome).toMatchObject({ status: "failed", by: "child", error: expect.any(String) });
    const wake = await waitFor(async () => (await events(base, parent)).find((e) => e.kind === "message" && e.body.from === `operation:${operation}`));
    expect(wake.body.text).toContain("failed");
  });

  it("never leaves a delegation open for ever: a child that runs no turns is refused, one retired first cancels it", async () => {
    const base = front().url;
    const parent = await spawn();
    const external = await post(`/threads/${parent}/operations`, { kind: "delegation", title: "x", prompt: "p", spec: { type: "external" } });
    expect([external.status, external.body.code]).toEqual([400, "record-only-thread"]);
    const { operation, child } = (await post(`/threads/${parent}/operations`, { kind: "delegation", title: "waits", prompt: sim({ tool: { name: "shell", input: { command: "true" } } }), spec: { permissions: "ask" } })).body;
    await waitFor(async () => (await call(base, "GET", `/threads/${child}/turn`)).body.waitingOn.approvals[0]);
    await call(base, "DELETE", `/threads/${child}?reason=not+needed`);
    const settled = await waitFor(async () => {
      const o = (await call(base, "GET", `/threads/${parent}/operations/${operation}`)).body;
      return o.state !== "open" ? o : null;
    }, 30_000);
    // Its turn was waiting: the turn's end (interrupted by nothing, it fails when retired) or the retirement settles it, once.
    expect(["cancelled", "failed"]).toContain(settled.state);
    expect((await events(base, parent)).filter((e) => e.kind === "operation-settled")).toHaveLength(1);
  });

  it("replays a repeated delegation whose prompt is a large body, spawning no second child", async () => {
    const parent = await spawn();
    const prompt = `summarize ${"x".repeat(70_000)}`;
    const first = await post(`/threads/${parent}/operations`, { kind: "delegation", title: "big", prompt }, "big-1");
    const again = await post(`/threads/${parent}/operations`, { kind: "delegation", title: "big", prompt }, "big-1");
    expect([first.status, again.status, again.body.operation, again.body.child]).toEqual([201, 200, first.body.operation, first.body.child]);
  });

  it("blocks a cut of the parent's context while the child has not answered (WindowBlocked)", async () => {
    const base = front().url;
    const parent = await spawn();
    await call(base, "POST", `/threads/${parent}/send`, { text: "some history" });
    const { operation, child } = (await post(`/threads/${parent}/operations`, { kind: "delegation", title: "slow", prompt: sim({ tool: { name: "shell", input: { command: "true" } } }), spec: { permissions: "ask" } })).body;
    const approval = await waitFor(async () => (await call(base, "GET", `/threads/${child}/turn`)).body.waitingOn.approvals[0]);
    const blocked = await call(base, "POST", `/threads/${parent}/compact`, { mode: "collapse" });
    expect([blocked.status, blocked.body.code]).toEqual([409, "window-blocked"]);
    expect((await call(base, "GET", `/threads/${parent}/compact`)).body.refusals.at(-1)).toMatchObject({ refusal: "WindowBlocked" });
    await call(base, "POST", `/threads/${child}/approvals/${approval}`, { decision: "allow" });
    await waitFor(async () => (await call(base, "GET", `/threads/${parent}/operations/${operation}`)).body.state !== "open", 30_000);
    expect((await call(base, "POST", `/threads/${parent}/compact`, { mode: "collapse" })).status).toBe(200);
  });
});
