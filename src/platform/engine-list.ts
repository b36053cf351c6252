import { ENGINES_TOKEN_HEADER } from "../api/engine.js";
import type { EngineEntry, EngineHostState } from "../api/engines.js";
import type { Env } from "./env.js";

/** What a route says when `engineList` has no answer. */
export const ENGINE_HOST_SILENT = "the engine host did not answer (plain `wrangler dev` runs none: start the runtime with `npm start` to have engines)";

/** What the engine host can run and the sandbox it runs them in, asked live: it found both when it started. */
export async function engineHostState(env: Env): Promise<EngineHostState | null> {
  try {
    const res = await env.ENGINES.fetch("https://engines/engines", { headers: { [ENGINES_TOKEN_HEADER]: env.SERVICE_ENGINES_TOKEN ?? "" } });
    if (!res.ok) return null;
    return (await res.json()) as EngineHostState;
  } catch {
    return null;
  }
}

/** What the engine host can run. */
export async function engineList(env: Env): Promise<EngineEntry[] | null> {
  return (await engineHostState(env))?.engines ?? null;
}
