import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { EngineEntry } from "../../../../src/api/engines.js";
import { versionOf } from "../version-probe.js";

/** What `GET /accounts` lists for engine_a, and whether its turns can run. */
export type EngineABinary = EngineEntry & { engine: "engine_a" };

/** The agent SDK ships its CLI in a package per platform (glibc or musl on Linux); whichever npm installed. */
function packagedBinary(): string | null {
  const platform = `${process.platform}-${process.arch}`;
  const require = createRequire(import.meta.url);
  for (const name of [platform, `${platform}-musl`]) {
    try {
      const bin = join(dirname(require.resolve(`@anthropic-ai/claude-agent-sdk-${name}/package.json`)), process.platform === "win32" ? "claude.exe" : "claude");
      if (existsSync(bin)) return bin;
    } catch {
      // Not installed for this platform: try the next.
    }
  }
  return null;
}

/**
 * `SERVICE_ENGINE_A_BIN`, else the CLI the agent SDK installed; available when it runs.
 * Probed at start, so a missing CLI refuses engine_a spawns up front (`engine-unavailable`)
 * instead of failing each turn later with an unclassified error.
 */
export async function findEngineA(override: string | undefined): Promise<EngineABinary> {
  const binary = override || packagedBinary();
  const base = { engine: "engine_a" as const, binary, versionNeeded: null };
  if (!binary) return { ...base, versionFound: null, available: false, reason: "no agent CLI: reinstall @anthropic-ai/claude-agent-sdk with its platform package, or set SERVICE_ENGINE_A_BIN" };
  const probe = await versionOf(binary);
  if ("failed" in probe) return { ...base, versionFound: null, available: false, reason: probe.failed };
  return { ...base, versionFound: probe.printed.split("\n")[0]!.slice(0, 80), available: true, reason: null };
}
