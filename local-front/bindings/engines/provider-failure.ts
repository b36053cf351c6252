import type { FailureClass, TurnFailure } from "../../../src/api/engine.js";

/**
 * The failure class of a model call that failed, from the HTTP status the provider
 * answered (pi-ai's onResponse, engine_a's `api_error_status`) and the error text the
 * engine reports (pi-ai's, engine_a's result, codex's when its `codexErrorInfo` does not
 * say). The text is checked first for the cases a status alone cannot tell apart
 * (a spent quota and a rate limit are both 429).
 */
export function classifyProviderError(seen: number | null, message: string): TurnFailure {
  const text = message.toLowerCase();
  // The runtime recovers from these (docs/compaction.md): a class alone cannot say so.
  if (/context_length_exceeded|prompt is too long|maximum context length|exceeds the context window/.test(text))
    return { class: "session", error: message, windowFull: true };
  // pi-ai reports an HTTP failure as "<status> <provider's message>"; onResponse sees only
  // answers that succeeded, so in a turn of several calls it may hold an earlier 200.
  const leading = /^(\d{3})\s/.exec(message);
  const status = leading ? Number(leading[1]) : seen;
  const cls = ((): FailureClass => {
    if (/insufficient_quota|exceeded your current quota|credit balance|quota/.test(text)) return "quota";
    if (/rate.?limit|too many requests/.test(text) || status === 429) return "quota";
    if (/model_not_found|does not exist|not_found_error|unknown model/.test(text) || status === 404) return "model-not-found";
    if (/unsupported_model|not supported|permission_error|not available for/.test(text) || status === 403) return "unsupported-model";
    if (/invalid_api_key|incorrect api key|invalid api key|authentication|unauthorized|invalid x-api-key/.test(text) || status === 401) return "auth";
    if (/terminated|socket|econnreset|premature|malformed|unexpected end|ended before|json/.test(text)) return "session";
    return "unknown";
  })();
  return { class: cls, error: message || `the provider answered ${status ?? "nothing"}` };
}
