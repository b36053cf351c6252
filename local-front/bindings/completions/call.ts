import { COMPLETIONS_CODES as CODES, type CompletionAttempt, type CompletionCall, type CompletionReport, type CompletionUsage } from "../../../src/api/completions.js";
import type { AccountPool } from "../accounts/pool.js";
import { retryMs, SPENT } from "../accounts/health.js";
import type { SessionProxy } from "../engines/access.js";
import { withSessionRoute, type SessionRoute } from "../engines/session-network.js";
import type { Placeholders } from "../proxy/placeholder.js";
import type { ModelCatalog } from "./models.js";

export interface CompletionDeps {
  pool: AccountPool;
  placeholders: Placeholders;
  proxy: SessionProxy | null;
  simulatorUrl: string | null;
  catalog: ModelCatalog;
}

/** Provider answers that move the call to the next account, and what each is recorded as. */
function refusalOf(status: number, body: string, proxyCode: string | null): string | null {
  if (proxyCode === "proxy-upstream-unreachable") return "proxy-unreachable";
  if (status === 401 || status === 403) return "auth";
  if (status === 402 || (status === 400 && SPENT.test(body))) return "quota";
  if (status === 429) return SPENT.test(body) ? "quota" : "rate-limit";
  return null;
}

function usageOf(raw: unknown): CompletionUsage | null {
  const u = raw as { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined;
  if (!u || typeof u.prompt_tokens !== "number") return null;
  const completion = u.completion_tokens ?? 0;
  return { promptTokens: u.prompt_tokens, completionTokens: completion, totalTokens: u.total_tokens ?? u.prompt_tokens + completion };
}

/** The provider's own error message, for the caller. */
function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
  } catch {
    // Not JSON: the text itself.
  }
  return body.slice(0, 500);
}

/** One `data:` payload of an SSE body, or the sign that the body ended, and how. */
type SseEvent = { data: string } | { end: "done" | "cut" };

/**
 * Reads an SSE body frame by frame. A stream is whole only when it says `[DONE]`: one
 * that just stops was cut off upstream, however cleanly its connection closed. After
 * `[DONE]` the body is read to its end, not cancelled: a cancelled body costs its
 * connection, and the next call a new one (through the proxy, two TLS handshakes).
 */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let done = false;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    if (done) continue;
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = frame
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (data === "[DONE]") {
        done = true;
        yield { end: "done" };
        break;
      }
      if (data) yield { data };
    }
  }
  if (!done) yield { end: "cut" };
}

/** A provider that fails after its stream began sends one `{"error": ...}` frame and stops. */
function streamError(chunk: Record<string, unknown>): string | null {
  const error = chunk.error as { message?: unknown } | string | undefined;
  if (error === undefined || error === null) return null;
  if (typeof error === "string") return error;
  return typeof error.message === "string" ? error.message : JSON.stringify(error).slice(0, 500);
}

interface Target {
  account: string | null;
  url: string;
  key: string;
  route: SessionRoute | null;
}

/**
 * One completions call: the first account of the caller's list that serves the model's
 * provider and is not cooling down gets it; a refusal (auth, quota, rate limit, or the
 * proxy unable to reach the provider) moves it to the next. Calls go out like a
 * session's: with a placeholder, through the credential proxy. Once the provider
 * accepts, the answer streams back and nothing fails over any more: the caller may
 * already hold part of it, and a second account would write it again. A stream that
 * fails from then on (an error frame, or an end without `[DONE]`) is an upstream error.
 */
export async function runCompletion(deps: CompletionDeps, call: CompletionCall, emit: (r: CompletionReport) => void, signal: AbortSignal): Promise<void> {
  const attempts: CompletionAttempt[] = [];
  const fail = (status: number, code: string, message: string, retryAfterS?: number) =>
    emit({ type: "error", status, code, message, attempts, ...(retryAfterS ? { retryAfterS } : {}) });
  const model = deps.catalog.find(call.request.model);
  if (!model) return fail(404, CODES.modelNotFound, `The model \`${call.request.model}\` does not exist or this endpoint cannot route it.`);

  let targets: Target[];
  if (deps.simulatorUrl) {
    targets = [{ account: null, url: `${deps.simulatorUrl}/v1/chat/completions`, key: "placeholder-not-a-key", route: null }];
  } else {
    const eligible = call.accounts.filter((id) => deps.pool.has(id) && deps.pool.provider(id) === model.provider);
    if (eligible.length === 0)
      return fail(409, CODES.noEligibleAccount, `No account of this workspace serves ${model.provider}, which ${model.id} needs.`);
    const ready = eligible.filter((id) => !deps.pool.coolingDown(id));
    if (ready.length === 0) {
      const resting = eligible.filter((id) => deps.pool.lastFailureClass(id) === "rate-limit");
      if (resting.length > 0) {
        const back = Math.min(...resting.map((id) => deps.pool.coolingUntil(id)));
        return fail(429, CODES.rateLimited, `Every ${model.provider} account of this workspace is rate limited.`, Math.max(1, Math.ceil((back - Date.now()) / 1000)));
      }
      return fail(409, CODES.noSpendableAccount, `Every ${model.provider} account of this workspace is spent or refused its login; none can take a call now.`);
    }
    targets = [];
    for (const id of ready) {
      const base = deps.pool.baseUrl(id);
      const url = model.provider === "openai" ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
      if (deps.proxy) {
        targets.push({ account: id, url, key: deps.placeholders.make({ account: id, threadId: call.threadId }), route: { proxyUrl: deps.proxy.url, ca: deps.proxy.caPem } });
        continue;
      }
      const cred = await deps.pool.credential(id);
      if (!cred.ok) {
        attempts.push({ account: id, status: 0, outcome: cred.reason === "revoked" ? "auth" : "proxy-unreachable" });
        continue;
      }
      targets.push({ account: id, url, key: cred.credential.secret, route: null });
    }
  }

  const stream = call.request.stream === true;
  // Usage is always asked for, so the completion event can record it; the worker drops the
  // usage chunk when the caller did not ask.
  const body = JSON.stringify(stream ? { ...call.request, stream_options: { ...(call.request.stream_options ?? {}), include_usage: true } } : call.request);
  const waits: number[] = [];
  for (const target of targets) {
    let res: Response;
    try {
      res = await withSessionRoute(target.route, () =>
        fetch(target.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` }, body, signal }),
      );
    } catch (err) {
      if (signal.aborted) return;
      attempts.push({ account: target.account ?? "simulator", status: 0, outcome: "proxy-unreachable" });
      if (target.account && !deps.proxy) deps.pool.unreachable(target.account, `could not reach ${new URL(target.url).host}: ${(err as Error).message}`);
      continue;
    }
    if (!res.ok) {
      const text = await res.text();
      if (target.account && !deps.proxy) deps.pool.response(target.account, res.status, Object.fromEntries(res.headers), text, target.key);
      const refusal = refusalOf(res.status, text, res.headers.get("x-service-proxy"));
      attempts.push({ account: target.account ?? "simulator", status: res.status, outcome: refusal ?? "error" });
      if (refusal) {
        const retryAfter = res.headers.get("retry-after");
        if (retryAfter) waits.push(retryMs(retryAfter));
        continue;
      }
      if (res.status === 404) return fail(404, CODES.modelNotFound, providerMessage(text));
      if (res.status === 400) return fail(400, CODES.invalidRequest, providerMessage(text));
      return fail(502, CODES.upstreamError, `The provider answered ${res.status}: ${providerMessage(text)}`);
    }
    attempts.push({ account: target.account ?? "simulator", status: res.status, outcome: "ok" });
    emit({ type: "start", account: target.account ?? "simulator" });
    let usage: CompletionUsage | null = null;
    let ended = false;
    try {
      if (stream && res.body) {
        for await (const event of sseData(res.body)) {
          if ("end" in event) {
            if (event.end === "cut") return fail(502, CODES.upstreamError, "The provider's stream ended without [DONE]: its answer was cut off.");
            // The caller has its answer now; the loop goes on only to read the body's end.
            emit({ type: "end", usage, attempts });
            ended = true;
            continue;
          }
          const chunk = JSON.parse(event.data) as Record<string, unknown>;
          const error = streamError(chunk);
          if (error !== null) return fail(502, CODES.upstreamError, `The provider failed mid-stream: ${error}`);
          usage = usageOf(chunk.usage) ?? usage;
          emit({ type: "chunk", data: chunk });
        }
      } else {
        const completion = (await res.json()) as Record<string, unknown>;
        usage = usageOf(completion.usage);
        emit({ type: "result", completion });
      }
    } catch (err) {
      // A body that breaks after `[DONE]` broke nothing the caller holds.
      if (signal.aborted || ended) return;
      return fail(502, CODES.upstreamError, `The provider's answer broke off: ${(err as Error).message}`);
    }
    if (!ended) emit({ type: "end", usage, attempts });
    return;
  }
  const allRateLimits = attempts.length > 0 && attempts.every((a) => a.outcome === "rate-limit");
  if (allRateLimits) {
    const wait = waits.length ? Math.max(1, Math.ceil(Math.min(...waits) / 1000)) : undefined;
    return fail(429, CODES.rateLimited, `Every ${model.provider} account of this workspace was rate limited.`, wait);
  }
  return fail(429, CODES.accountsExhausted, `Every ${model.provider} account of this workspace refused the call (${attempts.map((a) => `${a.account}: ${a.outcome}`).join(", ")}).`);
}
