import type { Context } from "hono";
import { TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT } from "../api/tail.js";
import { parseSeqCursor } from "../shared/cursors.js";
import { CODES } from "../api/errors.js";
import { refused } from "./answer.js";

/** Query values the log-reading routes share: a bad one is a 400 `invalid-query` (SPEC "Errors"). */

/** An integer query value of at least `min`, clamped to `max`; `fallback` when absent; a refusal when bad. */
export function intParam(raw: string | undefined, name: string, fallback: number, max: number, min = 1): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) refused(400, `${name} must be an integer of at least ${min}, not ${JSON.stringify(raw)}`, CODES.invalidQuery);
  return Math.min(Number(raw), max);
}

/** A seq: in the path (`/messages/:seq`), the query (`after`), or the `Last-Event-ID` header; the code says which was wrong. */
export function seqParam(raw: string, name: string, code: string = CODES.invalidQuery): number {
  const seq = parseSeqCursor(raw);
  return seq ?? refused(400, `${name} is not a valid cursor: ${JSON.stringify(raw)}`, code);
}

/** `after`, `before` (a cursor or `latest`) and `limit` of a tail page. */
export function pageParams(q: Record<string, string>): { after?: number; before?: number; limit: number } {
  const { after, before } = q;
  if (after !== undefined && before !== undefined) refused(400, "give after or before, not both", CODES.invalidQuery);
  const limit = intParam(q.limit, "limit", TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT);
  const afterSeq = after === undefined ? undefined : seqParam(after, "after");
  const beforeSeq = before === undefined ? undefined : before === "latest" ? Number.MAX_SAFE_INTEGER : seqParam(before, "before");
  return { after: afterSeq, before: beforeSeq, limit };
}

/** Where an SSE follow resumes: a reconnecting EventSource repeats the original URL and adds Last-Event-ID, which wins. */
export function resumeCursor(c: Context): number {
  const header = c.req.header("last-event-id");
  return header !== undefined ? seqParam(header, "Last-Event-ID", CODES.invalidHeader) : seqParam(c.req.query("after") ?? "0", "after");
}

/** The request's `Idempotency-Key`, if it has one: 1 to 200 characters, or a 400 `invalid-header`. */
export function idempotencyKey(c: Context): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key !== undefined && (key.length === 0 || key.length > 200)) refused(400, "Idempotency-Key must be 1 to 200 characters", CODES.invalidHeader);
  return key;
}
