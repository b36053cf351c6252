import type { Env } from "./env.js";

/** One engine as the engine host reports it (`GET /accounts` `engines`). */
export interface EngineEntry {
  engine: "pi" | "engine_a" | "engine_b";
  binary: string | null;
  versionFound: string | null;
  versionNeeded: string | null;
  available: boolean;
  reason: string | null;
}

/** What the engine host can run, asked live: it found the binaries when it started. */
export async function engineList(env: Env): Promise<EngineEntry[] | null> {
  try {
    const res = await env.ENGINES.fetch("https://engines/engines", { headers: { "x-service-engines": env.SERVICE_ENGINES_TOKEN ?? "" } });
    if (!res.ok) return null;
    return ((await res.json()) as { engines: EngineEntry[] }).engines;
  } catch {
    return null;
  }
}
