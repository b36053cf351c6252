import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Outcome } from "../../objects/lib/outcome.js";
import type { ErrorBody } from "../api/errors.js";

export function refusal(status: number, error: string, code?: string, details?: Record<string, unknown>, headers?: HeadersInit): Response {
  const body: ErrorBody = { error, ...(code ? { code } : {}), ...details };
  return Response.json(body, { status, headers });
}

/** An object's answer as HTTP: the value as JSON with `status`, or its refusal as is. */
export function answer<T>(c: Context, outcome: Outcome<T>, status: ContentfulStatusCode = 200): Response {
  if (!outcome.ok) return Response.json(outcome.body, { status: outcome.status });
  return c.json(outcome.value as object, status);
}

/** An object's answer that is already JSON text (log pages are spliced, not re-encoded). */
export function answerText(outcome: Outcome<string>): Response {
  if (!outcome.ok) return Response.json(outcome.body, { status: outcome.status });
  return new Response(outcome.value, { headers: { "content-type": "application/json; charset=utf-8" } });
}
