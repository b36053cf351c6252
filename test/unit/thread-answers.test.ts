import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/http/openapi.js";
import { answerProblem, checkAnswersOf } from "../support/answer-check.js";

/** The thread and turn routes whose successes are JSON: each declares its answer exactly (docs/api.md, "Threads", "Turns"). */
const ROUTES = [
  "POST /spawn",
  "GET /threads",
  "GET /threads/{id}",
  "GET /threads/{id}/head",
  "DELETE /threads/{id}",
  "POST /threads/{id}/restore",
  "PUT /threads/{id}/seat-lease",
  "POST /threads/{id}/messages",
  "PATCH /threads/{id}/messages/{seq}",
  "DELETE /threads/{id}/messages/{seq}",
  "POST /threads/{id}/events",
  "GET /threads/{id}/tail",
  "GET /threads/{id}/attachments",
  "GET /threads/{id}/tool-results/{seq}",
  "GET /threads/{id}/turn",
  "POST /threads/{id}/send",
  "POST /threads/{id}/interrupt",
  "POST /threads/{id}/fork",
  "POST /threads/{id}/role",
  "POST /threads/{id}/recover",
  "GET /threads/{id}/loop",
  "POST /threads/{id}/loop",
  "POST /threads/{id}/loop/continue",
  "POST /threads/{id}/loop/stop",
  "POST /threads/{id}/approvals/{approvalId}",
  "GET /threads/{id}/questions/{requestId}",
  "POST /threads/{id}/questions/{requestId}/answer",
  "POST /threads/{id}/questions/{requestId}/continue",
  "POST /threads/{id}/questions/{requestId}/dismiss",
  "GET /threads/{id}/steering",
  "GET /threads/{id}/memory",
];

type Schema = { type?: string; properties?: object; anyOf?: Schema[]; additionalProperties?: unknown };

/** An answer schema that names its fields and no others (alternatives each so). */
function exact(s: Schema): boolean {
  if (s.anyOf) return s.anyOf.every(exact);
  return s.type === "object" && s.properties !== undefined && s.additionalProperties === false;
}

describe("the thread and turn routes' answers", () => {
  const doc = openApiDocument("test") as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>> };

  it("are declared exactly, every success status of each route", () => {
    const loose: string[] = [];
    for (const key of ROUTES) {
      const [method, path] = key.split(" ") as [string, string];
      const op = doc.paths[path]![method.toLowerCase()]!;
      for (const [status, r] of Object.entries(op.responses))
        if (status.startsWith("2")) {
          const schema = r.content!["application/json"]!.schema;
          // A status that also carries a refusal (approval-closed) is the answer or the error body.
          const answers = schema.anyOf && schema.anyOf.some((a) => a.additionalProperties === true) ? schema.anyOf.filter((a) => a.additionalProperties !== true) : [schema];
          if (!answers.every(exact)) loose.push(`${key} ${status}`);
        }
    }
    expect(loose).toEqual([]);
  });

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
