import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { CompletionsError } from "../api/completions.js";
import { refuse, type Outcome, type Refusal } from "../api/outcome.js";

/**
 * The router's one error path: a handler, middleware or helper that refuses throws
 * `Refused`, wherever it is, and `app.onError` answers it. Pure rules and objects return
 * a `Refusal` (data) instead; the router throws it with `fail`.
 */
export class Refused extends Error {
  constructor(
    readonly status: number,
    /** The runtime's `{error, code}`, or the completions endpoint's OpenAI-shaped error. */
    readonly body: Refusal["body"] | CompletionsError,
    readonly headers?: Record<string, string>,
  ) {
    super(typeof body.error === "string" ? body.error : body.error.message);
  }

  toResponse(): Response {
    return Response.json(this.body, { status: this.status, headers: this.headers });
  }
}

export function fail(r: Refusal): never {
  throw new Refused(r.status, r.body, r.headers);
}

export function refused(status: number, error: string, code: string, details?: Record<string, unknown>, headers?: Record<string, string>): never {
  fail(refuse(status, error, code, details, headers));
}

/** An object's answer: its value, or its refusal thrown. */
export function valueOf<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) fail(outcome);
  return outcome.value;
}

/** An object's answer as HTTP: the value as JSON with `status`, or its refusal as is. */
export function answer<T>(c: Context, outcome: Outcome<T>, status: ContentfulStatusCode = 200): Response {
  return c.json(valueOf(outcome) as object, status);
}

/** An object's answer that is already JSON text (log pages are spliced, not re-encoded). */
export function answerText(outcome: Outcome<string>): Response {
  return new Response(valueOf(outcome), { headers: { "content-type": "application/json; charset=utf-8" } });
}

/**
 * A binding's JSON answer, streamed to the caller as the binding wrote it (the code reads),
 * with `c.json`'s content type; the binding's length goes with its body.
 */
export function answerBody(outcome: Outcome<Response>): Response {
  return new Response(valueOf(outcome).body, { headers: { "content-type": "application/json" } });
}
