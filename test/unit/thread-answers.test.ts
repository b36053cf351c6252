import { describe, expect, it } from "vitest";
import { answerProblem, checkAnswersOf } from "../support/answer-check.js";

describe("the thread and turn routes' answers", () => {
  const base = "http://127.0.0.1:3";
  checkAnswersOf(base);
  const json = "application/json";
  const head = { id: "thr_1", type: "chat", role: "chat", workspace: null, parent: null, seatLease: null, title: null, createdAt: "2026-01-01T00:00:00.000Z" };
  const loop = { status: "paused", prompt: "go", maxTurns: 3, until: null, done: 1, reason: "turn-failed" };

  it("take the bodies the routes build, and refuse a field more or less, or a value outside a closed list", () => {
    expect(answerProblem(base, "GET", "/threads/thr_1/head", 200, json, head)).toBeNull();
    expect(answerProblem(base, "GET", "/threads/thr_1/head", 200, json, { ...head, extra: 1 })).toMatch(/additional properties/);
    const { createdAt: _, ...short } = head;
    expect(answerProblem(base, "GET", "/threads/thr_1/head", 200, json, short)).toMatch(/createdAt/);
    expect(answerProblem(base, "GET", "/threads/thr_1/loop", 200, json, { loop })).toBeNull();
    expect(answerProblem(base, "GET", "/threads/thr_1/loop", 200, json, { loop: null })).toBeNull();
    expect(answerProblem(base, "POST", "/threads/thr_1/loop/stop", 200, json, { ...loop, reason: "bored" })).toMatch(/allowed values/);
    expect(answerProblem(base, "DELETE", "/threads/thr_1", 200, json, { archived: true, seq: 4, ts: "t" })).toBeNull();
    expect(answerProblem(base, "POST", "/threads/thr_1/restore", 200, json, { archived: true, seq: 5, ts: "t" })).toMatch(/constant/);
    // send's 202: queued with why, or (async) the message at once.
    const queued = { seq: 2, ts: "t", turnId: null, outcome: "queued", failure: null, reply: null, queuedBecause: { code: "seat-elsewhere", error: "on a peer" } };
    expect(answerProblem(base, "POST", "/threads/thr_1/send", 202, json, queued)).toBeNull();
    expect(answerProblem(base, "POST", "/threads/thr_1/send", 202, json, { seq: 2, ts: "t" })).toBeNull();
    expect(answerProblem(base, "POST", "/threads/thr_1/messages", 202, json, { seq: 2, ts: "t", replayed: true })).toBeNull();
    // A second answer to an approval is a 200 refusal, beside the resolution.
    expect(answerProblem(base, "POST", "/threads/thr_1/approvals/a1", 200, json, { approvalId: "a1", decision: "allow", seq: 7 })).toBeNull();
    expect(answerProblem(base, "POST", "/threads/thr_1/approvals/a1", 200, json, { error: "closed", code: "approval-closed", approvalId: "a1", decision: "deny", expired: true })).toBeNull();
    const event = { seq: 3, ts: "t", kind: "tool-result", body: { callId: "c", name: "bash", output: "" }, blob: { sha256: "ab", bytes: 9000 } };
    expect(answerProblem(base, "GET", "/threads/thr_1/tail?after=0", 200, json, { events: [event], nextAfter: "3", hasMore: false })).toBeNull();
    expect(answerProblem(base, "GET", "/threads/thr_1/tail", 200, json, { events: [{ ...event, kind: "nonsense" }], prevBefore: "3", hasMore: false })).toMatch(/does not match/);
  });
});
