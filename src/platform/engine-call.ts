import { ENGINES_TOKEN_HEADER } from "../api/engine.js";
import { bindingAnswer, ENGINE_HOST_NOT_CONNECTED } from "./binding-answer.js";
import type { Env } from "./env.js";

/**
 * A request to the engine host, through the engines binding. The engine host runs tools
 * on this machine, so it answers only callers that know the token the front shares with
 * the worker at each boot (`SERVICE_ENGINES_TOKEN`). With no engine host behind the
 * binding (plain `wrangler dev`), the answer is the engine host's own refusal shape, so a
 * turn fails as `engine-unavailable` and says how to run with engines.
 */
export async function callEngine(env: Env, path: string, body: unknown): Promise<Response> {
  const res = await env.ENGINES.fetch(`https://engines${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", [ENGINES_TOKEN_HEADER]: env.SERVICE_ENGINES_TOKEN ?? "" },
    body: JSON.stringify(body),
  });
  return bindingAnswer(res, { class: "engine-unavailable", error: ENGINE_HOST_NOT_CONNECTED });
}
