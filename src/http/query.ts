import type { Context } from "hono";
import { TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT } from "../api/tail.js";
import { parseSeqCursor } from "../shared/cursors.js";
import { refused } from "./answer.js";

/** Query values the log-reading routes share: a bad one is a plain 400 (SPEC "Errors"). */

/** An integer query value of at least `min`, clamped to `max`; `fallback` when absent; a refusal when bad. */
export function intParam(raw: string | undefined, name: string, fallback: number, max: number, min = 1): number {
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) refused(400, `${name} must be an integer of at least ${min}, not ${JSON.stringify(raw)}`);
  return Math.min(Number(raw), max);
}

export function seqParam(raw: string, name: string): number {
  const seq = parseSeqCursor(raw);
  return seq ?? refused(400, `${name} is not a valid cursor: ${JSON.stringify(raw)}`);
}

/** `after`, `before` (a cursor or `latest`) and `limit` of a tail page. */
export function pageParams(q: Record<string, string>): { after?: number; before?: number; limit: number } {
  const { after, before } = q;
  if (after !== undefined && before !== undefined) refused(400, "give after or before, not both");
  const limit = intParam(q.limit, "limit", TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT);
  const afterSeq = after === undefined ? undefined : seqParam(after, "after");
  const beforeSeq = before === undefined ? undefined : before === "latest" ? Number.MAX_SAFE_INTEGER : seqParam(before, "before");
  return { after: afterSeq, before: beforeSeq, limit };
}

/** Where an SSE follow resumes: a reconnecting EventSource repeats the original URL and adds Last-Event-ID, which wins. */
export function resumeCursor(c: Context): number {
  const header = c.req.header("last-event-id");
  return seqParam(header ?? c.req.query("after") ?? "0", header !== undefined ? "Last-Event-ID" : "after");
}

/** The request's `Idempotency-Key`, if it has one: 1 to 200 characters, or a plain 400. */
export function idempotencyKey(c: Context): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key !== undefined && (key.length === 0 || key.length > 200)) refused(400, "Idempotency-Key must be 1 to 200 characters");
  return key;
}
