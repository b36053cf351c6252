import { builtinModules } from "node:module";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_DIR } from "../support/front.js";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const builtins = new Set(builtinModules.filter((m) => !m.startsWith("_")));
const IMPORT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)["']([^"']+)["']/g;

describe("src/ and objects/ stay deployable to Cloudflare", () => {
  it("import nothing from node: or a Node built-in", () => {
    const offenders: string[] = [];
    for (const dir of ["src", "objects"]) {
      for (const file of files(join(PROJECT_DIR, dir))) {
        for (const [, spec] of readFileSync(file, "utf8").matchAll(IMPORT)) {
          if (spec!.startsWith("node:") || builtins.has(spec!.split("/")[0]!)) offenders.push(`${file}: ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the check itself finds a node: import", () => {
    const sample = `import { x } from "node:fs";\nconst y = require('path');`;
    expect([...sample.matchAll(IMPORT)].map((m) => m[1])).toEqual(["node:fs", "path"]);
  });
});
