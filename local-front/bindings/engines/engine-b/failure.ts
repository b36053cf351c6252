import type { TurnFailure } from "../../../../src/api/engine.js";
import type { RunOutcome } from "../turn.js";
import { classifyProviderError } from "../provider-failure.js";
import type { CodexErrorInfo, TurnError } from "./types.js";

/**
 * How a codex turn that did not complete ended. codex 0.160.0 fails a turn whose answer
 * the Responses API marked incomplete at its output limit; for the runtime that turn
 * ended for a reason, with what the model wrote kept: a length stop, not a failure.
 */
export function codexTurnEnd(error: TurnError | null): RunOutcome {
  if (/Incomplete response returned, reason: max_output_tokens/.test(error?.message ?? "")) return { stop: "length" };
  return classifyCodexError(error);
}

/**
 * A failed codex turn's class, from its `codexErrorInfo` (what codex 0.160.0 reports for
 * each provider fault, checked against the simulator), falling back to the error text.
 */
export function classifyCodexError(error: TurnError | null): TurnFailure {
  const message = error?.message ?? "the turn failed without an error";
  const info = error?.codexErrorInfo ?? null;
  if (info === "usageLimitExceeded") return { class: "quota", error: message };
  if (info === "contextWindowExceeded") return { class: "session", error: message, windowFull: true };
  if (info === "unauthorized") return { class: "auth", error: message };
  if (info === "internalServerError" || info === "serverOverloaded") return { class: "unknown", error: message };
  if (info && typeof info === "object") {
    const status = httpStatusOf(info);
    if ("responseTooManyFailedAttempts" in info && status === 429) return { class: "quota", error: message };
    if (status === 401 || status === 403) return { class: /unsupported|not supported/i.test(message) ? "unsupported-model" : "auth", error: message };
    if (status === 404) return { class: "model-not-found", error: message };
    if (status === null && "httpConnectionFailed" in info) return { class: "unknown", error: `the provider could not be reached: ${message}` };
  }
  if (/stream disconnected|error decoding response body/i.test(message)) return { class: "session", error: message };
  return classifyProviderError(null, message);
}

type DetailedErrorInfo = Exclude<CodexErrorInfo, string>;
type DetailOf<T> = T extends unknown ? T[keyof T] : never;

/** The provider's HTTP status, from the details of the `codexErrorInfo` variants that carry one. */
function httpStatusOf(info: DetailedErrorInfo): number | null {
  for (const detail of Object.values<DetailOf<DetailedErrorInfo>>(info)) if ("httpStatusCode" in detail) return detail.httpStatusCode;
  return null;
}
