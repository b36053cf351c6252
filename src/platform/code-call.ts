import { CODE_TOKEN_HEADER } from "../api/code.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import { bindingAnswer, CODE_SERVICE_NOT_CONNECTED } from "./binding-answer.js";
import type { Env } from "./env.js";

/**
 * A request to the code service, through the CODE binding, with this boot's token; its
 * answer as an Outcome, the service's refusals kept (status, code), and a missing service
 * (plain `wrangler dev`) a 503 that says how to run with one.
 */
export async function callCode<T>(env: Env, method: "GET" | "POST", path: string, payload?: object): Promise<Outcome<T>> {
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
  const answer = (await res.json()) as Record<string, unknown>;
  if (res.ok) return ok(answer as T);
  const { error, code, ...rest } = answer as { error?: string; code?: string };
  const retryAfter = res.headers.get("retry-after");
  return refuse(res.status, error ?? `the code service answered ${res.status}`, code ?? CODES.codeServiceUnavailable, rest, retryAfter ? { "retry-after": retryAfter } : undefined);
}
