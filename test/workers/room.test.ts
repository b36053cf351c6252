import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Verdict } from "../../src/api/rooms.js";
import { newId } from "../../src/shared/ids.js";
import { newThread, value } from "./support.js";

// The Room object (docs/rooms.md): the single writer of a room's rounds. Each rule that
// needs atomicity is decided in one of its commits; these pin them down at the object.

function roomStub(id = newId("room_")) {
  return { id, stub: env.ROOM.get(env.ROOM.idFromName(id)) };
}

const init = (id: string) => ({ id, key: `team/acme/widgets#${id}`, workspace: "team", repo: "acme/widgets", pr: 7, reviewerSeat: "reviewer", createdAt: new Date().toISOString() });
const HEAD = "a".repeat(40);
const BASE = "b".repeat(40);
const verdict = (decision: Verdict["decision"] = "comment"): Verdict => ({ decision, summary: "s", findings: [], turnId: "turn_1", seat: "reviewer", submittedAt: new Date().toISOString() });

async function armedRoom(threadId = "thr_reviewer") {
  const { id, stub } = roomStub();
  const { token } = await stub.arm(init(id));
  await stub.armed(threadId, token!);
  return { id, stub };
}

const refusalCode = (o: { ok: boolean; body?: unknown }) => (o.ok ? null : (o.body as { code: string }).code);

describe("a review room (objects/room.ts)", () => {
  it("is made once: the next arm adopts it, and takes over only an arm that failed; an arm taken over cannot arm it", async () => {
    const { id, stub } = roomStub();
    const first = await stub.arm(init(id));
    expect(first).toMatchObject({ created: true, takeOver: true, room: { id, state: "arming", threadId: null } });
    // Another arm while the first is making the thread: the same room, and no second thread.
    expect(await stub.arm(init(id))).toMatchObject({ created: false, takeOver: false, token: null });
    await stub.armFailed(first.token!);
    const second = await stub.arm(init(id));
    expect(second).toMatchObject({ created: false, takeOver: true });
    // The first arm, late, neither arms the room nor lets a third arm in.
    expect(await stub.armed("thr_late", first.token!)).toBeNull();
    await stub.armFailed(first.token!);
    expect(await stub.arm(init(id))).toMatchObject({ takeOver: false });
    expect(await stub.armed("thr_x", second.token!)).toMatchObject({ state: "armed", threadId: "thr_x" });
    expect(await stub.arm(init(id))).toMatchObject({ created: false, takeOver: false, room: { state: "armed", threadId: "thr_x" } });
  });

  it("starts a round only when armed and none runs; a verdict goes to the running round alone", async () => {
    const { id, stub } = roomStub();
    const { token } = await stub.arm(init(id));
    expect(refusalCode(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }))).toBe("room-not-armed");
    await stub.armed("thr_reviewer", token!);
    const one = value(await stub.beginRound({ prompt: "p", seat: "reviewer", head: HEAD, base: BASE }));
    expect(one).toMatchObject({ n: 1, state: "running", head: HEAD, base: BASE, threadId: "thr_reviewer" });
    const again = await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE });
    expect(again).toMatchObject({ ok: false, status: 409, body: { code: "round-running", n: 1 } });
    await stub.roundAsked(1, 4);
    // Only the room's own thread gives verdicts, and only the turn that answers the round's message.
    expect(refusalCode(await stub.submitVerdict("thr_other", [4], verdict()))).toBe("no-round-running");
    expect(refusalCode(await stub.submitVerdict("thr_reviewer", [2, 3], verdict()))).toBe("no-round-running");
    expect(value(await stub.submitVerdict("thr_reviewer", [3, 4], verdict("approve")))).toMatchObject({ n: 1, state: "ready", verdict: { decision: "approve" } });
    // Once: the round has its verdict, and no other round runs to take a second.
    expect(refusalCode(await stub.submitVerdict("thr_reviewer", [4], verdict()))).toBe("no-round-running");
  });

  it("fails a round whose message a turn answered without a verdict, and no other round", async () => {
    const { stub } = await armedRoom();
    const r = value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }));
    await stub.roundAsked(r.n, 5);
    // A turn that answered earlier messages only (someone's chat before the round) leaves it running.
    await stub.turnEnded("thr_reviewer", [3, 4], null);
    expect(value(await stub.round(r.n)).state).toBe("running");
    await stub.turnEnded("thr_other", [5], null);
    expect(value(await stub.round(r.n)).state).toBe("running");
    await stub.turnEnded("thr_reviewer", [5], { class: "quota", error: "no allowance" });
    expect(value(await stub.round(r.n))).toMatchObject({ state: "failed", failure: expect.stringContaining("(quota): no allowance") });
    // A failed round is followed by a new one.
    expect(value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE })).n).toBe(2);
  });

  it("finalizes the newest ready round once at a time; a newer round supersedes it; a posted round answers its review again", async () => {
    const { stub } = await armedRoom();
    expect(refusalCode(await stub.beginFinalize(undefined))).toBe("verdict-not-ready");
    const one = value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }));
    expect(await stub.beginFinalize(1)).toMatchObject({ ok: false, body: { code: "verdict-not-ready", state: "running" } });
    await stub.submitVerdict("thr_reviewer", [], verdict());
    const two = value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }));
    expect(value(await stub.round(one.n)).state).toBe("superseded");
    expect(await stub.beginFinalize(one.n)).toMatchObject({ ok: false, body: { code: "round-superseded", newest: two.n } });
    await stub.submitVerdict("thr_reviewer", [], verdict());
    expect(value(await stub.beginFinalize(undefined))).toMatchObject({ done: false, round: { n: two.n } });
    // A second finalize while the first posts is refused, not posted twice.
    expect(refusalCode(await stub.beginFinalize(two.n))).toBe("round-finalizing");
    // The code host refused: the round stays ready and may be asked again.
    await stub.endFinalize(two.n, null);
    expect(value(await stub.beginFinalize(two.n)).done).toBe(false);
    const review = { id: 9, posted: 0, inBody: 0, skipped: 0, url: null, commitId: HEAD, postedAt: new Date().toISOString() };
    expect(await stub.endFinalize(two.n, review)).toMatchObject({ state: "finalized", review: { id: 9 } });
    expect(value(await stub.beginFinalize(undefined))).toMatchObject({ done: true, round: { review: { id: 9 } } });
    expect(refusalCode(await stub.beginFinalize(7))).toBe("round-not-found");
  });

  it("its watch fails a running round whose reviewer thread it sees idle twice, in case the turn's end was not reported", async () => {
    const { id: threadId } = await newThread();
    const { stub } = await armedRoom(threadId);
    const r = value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }));
    await stub.roundAsked(r.n, 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await stub.round(r.n)).state).toBe("running");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await stub.round(r.n))).toMatchObject({ state: "failed", failure: expect.stringContaining("seen by the room's watch") });
  });

  it("its watch fails a round whose message was never recorded (the request that started it died), once it is two watches old", async () => {
    const { stub } = await armedRoom();
    const r = value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE }));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await stub.round(r.n)).state).toBe("running");
    // Time passes the other way: the round's creation is moved back past two watches.
    await runInDurableObject(stub, (_room, state) => {
      state.storage.sql.exec("UPDATE rounds SET created_at = ? WHERE n = ?", new Date(Date.now() - 61_000).toISOString(), r.n);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await stub.round(r.n))).toMatchObject({ state: "failed", failure: expect.stringContaining("never sent") });
    expect(value(await stub.beginRound({ prompt: null, seat: "reviewer", head: HEAD, base: BASE })).n).toBe(2);
  });
});
