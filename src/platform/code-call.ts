import { CODE_TOKEN_HEADER } from "../api/code.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import { bindingAnswer, CODE_SERVICE_NOT_CONNECTED } from "./binding-answer.js";
import type { Env } from "./env.js";

/**
 * A request to the code service, through the CODE binding, with this boot's token: its
 * answer when the service answered 200, unread, for a route that gives it to the caller as
 * it is (its JSON streams through, not parsed here to be written again: an outline's 1,300
 * symbols are about 220 KB); otherwise the service's refusal kept (status, code), and a
 * missing service (plain `wrangler dev`) a 503 that says how to run with one.
 */
export async function codeBody(env: Env, method: "GET" | "POST", path: string, payload?: object): Promise<Outcome<Response>> {
  // A GET's payload is its query (values left out when undefined), a POST's its JSON body.
  const query = method === "GET" && payload ? `?${new URLSearchParams(Object.entries(payload).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])))}` : "";
  const body = method === "POST" ? payload : undefined;
  let res: Response;
  try {
    res = await bindingAnswer(
      await env.CODE.fetch(`https://code${path}${query}`, {
        method,
        headers: { [CODE_TOKEN_HEADER]: env.SERVICE_CODE_TOKEN ?? "", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { error: CODE_SERVICE_NOT_CONNECTED, code: CODES.codeServiceUnavailable },
    );
  } catch (err) {
    return refuse(503, `the code service could not be reached: ${(err as Error).message}`, CODES.codeServiceUnavailable);
  }
  if (res.status === 200 && res.body) return ok(res);
  // Passed on unread, an answer without a body would be an empty 200 the caller cannot parse.
  if (res.ok) return refuse(503, `the code service answered ${res.status} with no answer in it`, CODES.codeServiceUnavailable);
  const { error, code, ...rest } = (await res.json()) as { error?: string; code?: string };
  const retryAfter = res.headers.get("retry-after");
  return refuse(res.status, error ?? `the code service answered ${res.status}`, code ?? CODES.codeServiceUnavailable, rest, retryAfter ? { "retry-after": retryAfter } : undefined);
}

/** The code service's answer as a value, for a flow that reads it. */
export async function callCode<T>(env: Env, method: "GET" | "POST", path: string, payload?: object): Promise<Outcome<T>> {
  const answer = await codeBody(env, method, path, payload);
  return answer.ok ? ok((await answer.value.json()) as T) : answer;
}
