import { ENGINES_TOKEN_HEADER } from "../../src/api/engine.js";
import type { Env } from "../../src/env.js";

/**
 * A request to the engine host, through the engines binding. The engine host runs tools
 * on this machine, so it answers only callers that know the token the front shares with
 * the worker at each boot (`SERVICE_ENGINES_TOKEN`).
 */
export function callEngine(env: Env, path: string, body: unknown): Promise<Response> {
  return env.ENGINES.fetch(`https://engines${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", [ENGINES_TOKEN_HEADER]: env.SERVICE_ENGINES_TOKEN ?? "" },
    body: JSON.stringify(body),
  });
}
