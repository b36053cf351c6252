import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { getModels as GetModels } from "@mariozechner/pi-ai";

/**
 * pi-ai's table of models and prices, loaded alone. The catalog, the simulators' model
 * lists and the prices need it at start, and the package's index would bring typebox's
 * compiler with it (about 0.6 s of CPU; pi-packages.ts loads that with the first pi turn).
 * The table is a module of its own in the package, not one it exports, so it is found in
 * the package's folder; test/unit/model-table.test.ts holds it to the index's `getModels`.
 */
function tableFile(): string {
  for (const dir of createRequire(import.meta.url).resolve.paths("@mariozechner/pi-ai") ?? []) {
    const file = join(dir, "@mariozechner/pi-ai/dist/models.js");
    if (existsSync(file)) return file;
  }
  throw new Error("@mariozechner/pi-ai's model table (dist/models.js) is not installed: run npm ci");
}

const table = (await import(pathToFileURL(tableFile()).href)) as { getModels: typeof GetModels };

export const getModels: typeof GetModels = table.getModels;
