import type { Context } from "hono";
import { TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT } from "../api/tail.js";
import { parseSeqCursor } from "../shared/cursors.js";
import { refusal } from "./answer.js";

/** Query values the log-reading routes share: a bad one is a plain 400 (SPEC "Errors"). */

/** An integer query value of at least `min`, clamped to `max`; `fallback` when absent; a refusal when bad. */
export function intParam(raw: string | undefined, name: string, fallback: number, max: number, min = 1): number | Response {
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) return refusal(400, `${name} must be an integer of at least ${min}, not ${JSON.stringify(raw)}`);
  return Math.min(Number(raw), max);
}

export function seqParam(raw: string, name: string): number | Response {
  const seq = parseSeqCursor(raw);
  return seq === null ? refusal(400, `${name} is not a valid cursor: ${JSON.stringify(raw)}`) : seq;
}

/** `after`, `before` (a cursor or `latest`) and `limit` of a tail page. */
export function pageParams(q: Record<string, string>): { after?: number; before?: number; limit: number } | Response {
  const { after, before } = q;
  if (after !== undefined && before !== undefined) return refusal(400, "give after or before, not both");
  const limit = intParam(q.limit, "limit", TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT);
  if (limit instanceof Response) return limit;
  const afterSeq = after === undefined ? undefined : seqParam(after, "after");
  if (afterSeq instanceof Response) return afterSeq;
  const beforeSeq = before === undefined ? undefined : before === "latest" ? Number.MAX_SAFE_INTEGER : seqParam(before, "before");
  if (beforeSeq instanceof Response) return beforeSeq;
  return { after: afterSeq, before: beforeSeq, limit };
}

/** Where an SSE follow resumes: a reconnecting EventSource repeats the original URL and adds Last-Event-ID, which wins. */
export function resumeCursor(c: Context): number | Response {
  const header = c.req.header("last-event-id");
  return seqParam(header ?? c.req.query("after") ?? "0", header !== undefined ? "Last-Event-ID" : "after");
}
