/** Failures a `@sim` directive can script. */
export const FAIL_KINDS = [
  "quota",
  "auth",
  "model-not-found",
  "unsupported-model",
  "rate-limit",
  "server",
  "overloaded",
  "disconnect",
  "stream-error",
  "stream-failed",
  "stream-end",
] as const;
export type FailKind = (typeof FAIL_KINDS)[number];

/** Failures that come after the answer began (the stream writer's business), not as an error answer. */
export const MIDSTREAM_FAILS = ["disconnect", "stream-error", "stream-failed", "stream-end"] as const;
export type MidstreamFail = (typeof MIDSTREAM_FAILS)[number];
export type AnswerFail = Exclude<FailKind, MidstreamFail>;

export function isMidstream(kind: FailKind): kind is MidstreamFail {
  return (MIDSTREAM_FAILS as readonly string[]).includes(kind);
}

export type SimError =
  | { kind: "bad-request"; message: string }
  | { kind: "too-large"; limit: number }
  | { kind: "missing-key" }
  /** An OAuth access token used past its `expires_in`. */
  | { kind: "token-expired" }
  | { kind: "fail"; fail: AnswerFail; model: string; retryAfter: number }
  /** The prompt is longer than the model's window. */
  | { kind: "context"; model: string; window: number; tokens: number };

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Thrown while reading a request; the server renders it in the protocol's error shape. */
export class BadRequest extends Error {}

function openai(status: number, message: string, type: string, code: string | null, headers: Record<string, string> = {}, param: string | null = null): ErrorResponse {
  return { status, headers, body: { error: { message, type, param, code } } };
}

function anthropic(status: number, type: string, message: string, headers: Record<string, string> = {}): ErrorResponse {
  return { status, headers, body: { type: "error", error: { type, message } } };
}

// Messages and codes copy what the real providers send, because callers classify failures from them.
export function openaiError(e: SimError): ErrorResponse {
  switch (e.kind) {
    case "bad-request":
      return openai(400, e.message, "invalid_request_error", null);
    case "too-large":
      return openai(413, `Request body exceeds ${e.limit} bytes.`, "invalid_request_error", null);
    case "missing-key":
      return openai(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        "invalid_request_error",
        null,
      );
    case "token-expired":
      return openai(401, "Provided authentication token is expired. Please try signing in again.", "invalid_request_error", "token_expired");
    case "context":
      return openai(
        400,
        `This model's maximum context length is ${e.window} tokens. However, your messages resulted in ${e.tokens} tokens. Please reduce the length of the messages.`,
        "invalid_request_error",
        "context_length_exceeded",
        {},
        "messages",
      );
    case "fail":
      switch (e.fail) {
        case "quota":
          return openai(
            429,
            "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "insufficient_quota",
            "insufficient_quota",
          );
        case "auth":
          return openai(401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key");
        case "model-not-found":
          return openai(404, `The model \`${e.model}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found");
        case "unsupported-model":
          return openai(400, `The model \`${e.model}\` is not supported for this account.`, "invalid_request_error", "unsupported_model");
        case "rate-limit":
          return openai(
            429,
            `Rate limit reached for ${e.model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${e.retryAfter}s.`,
            "requests",
            "rate_limit_exceeded",
            { "retry-after": String(e.retryAfter) },
          );
        case "server":
          return openai(500, "The server had an error while processing your request. Sorry about that!", "server_error", "server_error");
        case "overloaded":
          return openai(503, "The server is overloaded or not ready yet.", "server_error", null);
      }
  }
}

export function anthropicError(e: SimError): ErrorResponse {
  switch (e.kind) {
    case "bad-request":
      return anthropic(400, "invalid_request_error", e.message);
    case "too-large":
      return anthropic(413, "request_too_large", `Request exceeds the maximum allowed number of bytes (${e.limit}).`);
    case "missing-key":
      return anthropic(401, "authentication_error", "x-api-key header is required");
    case "token-expired":
      return anthropic(401, "authentication_error", "OAuth token has expired. Please obtain a new token or refresh your existing token.");
    case "context":
      return anthropic(400, "invalid_request_error", `prompt is too long: ${e.tokens} tokens > ${e.window} maximum`);
    case "fail":
      switch (e.fail) {
        case "quota":
          return anthropic(
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
          );
        case "auth":
          return anthropic(401, "authentication_error", "invalid x-api-key");
        case "model-not-found":
          return anthropic(404, "not_found_error", `model: ${e.model}`);
        case "unsupported-model":
          return anthropic(403, "permission_error", `The model ${e.model} is not supported for this account.`);
        case "rate-limit":
          return anthropic(
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 5 requests per minute. Please try again later.",
            { "retry-after": String(e.retryAfter) },
          );
        case "server":
          return anthropic(500, "api_error", "Internal server error");
        case "overloaded":
          return anthropic(529, "overloaded_error", "Overloaded");
      }
  }
}

/** The Responses API words a full window its own way, with the same code. */
export function openaiResponsesError(e: SimError): ErrorResponse {
  if (e.kind !== "context") return openaiError(e);
  return openai(400, "Your input exceeds the context window of this model. Please adjust your input and try again.", "invalid_request_error", "context_length_exceeded", {}, "input");
}
