import type { Env } from "../../src/env.js";

/** A request to the engine host, through the engines binding. */
export function callEngine(env: Env, path: string, body: unknown): Promise<Response> {
  return env.ENGINES.fetch(`https://engines${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}
