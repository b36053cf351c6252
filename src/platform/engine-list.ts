import { ENGINES_TOKEN_HEADER } from "../api/engine.js";
import type { EngineEntry, EngineHostState, VolumeState } from "../api/engines.js";
import type { Env } from "./env.js";

/** What a route says when `engineList` has no answer. */
export const ENGINE_HOST_SILENT = "the engine host did not answer (plain `wrangler dev` runs none: start the runtime with `npm start` to have engines)";

/** What the engine host can run and the sandbox it runs them in, asked live: it found both when it started. */
export async function engineHostState(env: Env): Promise<EngineHostState | null> {
  try {
    const res = await env.ENGINES.fetch("https://engines/engines", { headers: { [ENGINES_TOKEN_HEADER]: env.SERVICE_ENGINES_TOKEN ?? "" } });
    if (!res.ok) return null;
    // An engine host of another build (or a stand-in) may answer without these: unknown, not a failed /health.
    const state = (await res.json()) as Partial<EngineHostState> | null;
    return Array.isArray(state?.engines) && typeof state.sandbox?.state === "string" ? (state as EngineHostState) : null;
  } catch {
    return null;
  }
}

/** What the engine host can run. */
export async function engineList(env: Env): Promise<EngineEntry[] | null> {
  return (await engineHostState(env))?.engines ?? null;
}

/** The data directory's volume, measured by the engine host now; null where none answers (on Cloudflare, or a stand-in). */
export async function volumeNow(env: Env): Promise<VolumeState | null> {
  try {
    const res = await env.ENGINES.fetch("https://engines/volume", { headers: { [ENGINES_TOKEN_HEADER]: env.SERVICE_ENGINES_TOKEN ?? "" } });
    if (!res.ok) return null;
    const v = (await res.json()) as Partial<VolumeState> | null;
    return typeof v?.freeBytes === "number" && typeof v.totalBytes === "number" ? (v as VolumeState) : null;
  } catch {
    return null;
  }
}
