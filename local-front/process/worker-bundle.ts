import { build, stop } from "esbuild";
import { resolve } from "node:path";

/**
 * Bundles the router worker and its objects in memory, as wrangler would for deploy. The
 * front bundles once a start, so esbuild's process (about 70 MB) is stopped after it
 * rather than kept idle for the front's life.
 */
export async function bundleWorker(projectDir: string, main: string): Promise<string> {
  const result = await build({
    entryPoints: [resolve(projectDir, main)],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*"],
    logLevel: "silent",
  }).finally(() => stop());
  return result.outputFiles[0]!.text;
}
