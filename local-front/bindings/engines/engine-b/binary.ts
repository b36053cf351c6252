import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { EngineEntry } from "../../../../src/api/engines.js";
import { versionOf } from "../version-probe.js";

/** The one codex release engine_b runs; its safe-command list is also in exec-rules.ts. */
export const ENGINE_B_VERSION = "0.160.0";

/** What `GET /accounts` lists for engine_b, and whether its turns can run. */
export type EngineBinary = EngineEntry & { engine: "engine_b" };

/** The binary of the platform package npm installed with `@openai/codex@0.160.0`. */
function packagedBinary(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve("@openai/codex-linux-x64/package.json");
    const triple = process.arch === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl";
    const bin = join(dirname(pkg), "vendor", triple, "bin", "codex");
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** `SERVICE_ENGINE_B_BIN`, else the packaged binary; available only at exactly the pinned release. */
export async function findEngineB(override: string | undefined): Promise<EngineBinary> {
  const binary = override || packagedBinary();
  const base = { engine: "engine_b" as const, binary, versionNeeded: ENGINE_B_VERSION };
  if (!binary) return { ...base, versionFound: null, available: false, reason: "no codex binary: install @openai/codex@0.160.0 or set SERVICE_ENGINE_B_BIN" };
  const probe = await versionOf(binary);
  if ("failed" in probe) return { ...base, versionFound: null, available: false, reason: probe.failed };
  const found = /(\d+\.\d+\.\d+\S*)/.exec(probe.printed)?.[1] ?? probe.printed.slice(0, 80);
  if (found !== ENGINE_B_VERSION)
    return { ...base, versionFound: found, available: false, reason: `${binary} is release ${found}; engine_b needs exactly ${ENGINE_B_VERSION}` };
  return { ...base, versionFound: found, available: true, reason: null };
}
