import { build } from "esbuild";
import { resolve } from "node:path";

/** Bundles the router worker and its objects in memory, as wrangler would for deploy. */
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
  });
  return result.outputFiles[0]!.text;
}
