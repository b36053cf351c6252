import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bundleWorker } from "../../local-front/process/worker-bundle.js";

let dir: string;
/** Writes a file dated a minute back, as a checkout's files are: one written as a build runs is not kept (the last test). */
const write = (path: string, text: string, dated = true) => {
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), text);
  const past = Date.now() / 1000 - 60;
  if (dated) utimesSync(join(dir, path), past, past);
};
const kept = () => join(dir, ".front", "worker.js");

/** Replaces the kept bundle's code, its key left as it is: a start that serves it shows the marker. */
function markKept(marker: string): void {
  const text = readFileSync(kept(), "utf8");
  writeFileSync(kept(), `${text.slice(0, text.indexOf("\n"))}\n${marker}`);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "worker-bundle-"));
  write("src/index.ts", 'import { word } from "./word.js";\nimport { dep } from "dep";\nexport default { fetch: () => new Response(word + dep) };\n');
  write("src/word.ts", 'export const word = "one";\n');
  write("node_modules/dep/package.json", JSON.stringify({ name: "dep", main: "a.js" }));
  write("node_modules/dep/a.js", 'export const dep = "from-a";\n');
  write("node_modules/dep/b.js", 'export const dep = "from-b";\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the worker's bundle, kept between starts", () => {
  it("is read, not built again, when no file it was built from changed", async () => {
    const first = await bundleWorker(dir, "src/index.ts");
    expect(first).toContain('"one"');
    markKept("// kept");
    expect(await bundleWorker(dir, "src/index.ts")).toBe("// kept");
  });

  it("is built again when a source changed", async () => {
    await bundleWorker(dir, "src/index.ts");
    markKept("// kept");
    write("src/word.ts", 'export const word = "two";\n');
    const again = await bundleWorker(dir, "src/index.ts");
    expect(again).toContain('"two"');
    expect(again).not.toContain('"one"');
  });

  it("is built again when a package resolves to another file, no source changed", async () => {
    expect(await bundleWorker(dir, "src/index.ts")).toContain("from-a");
    write("node_modules/dep/package.json", JSON.stringify({ name: "dep", main: "b.js" }));
    expect(await bundleWorker(dir, "src/index.ts")).toContain("from-b");
  });

  it("is built again when a resolution file appears where there was none", async () => {
    await bundleWorker(dir, "src/index.ts");
    markKept("// kept");
    // A tsconfig.json beside the sources can change how esbuild compiles them.
    write("src/tsconfig.json", "{}");
    expect(await bundleWorker(dir, "src/index.ts")).toContain('"one"');
  });

  it("is built again when an input is gone, and fails as esbuild does when the entry imports it", async () => {
    await bundleWorker(dir, "src/index.ts");
    markKept("// kept");
    rmSync(join(dir, "src/word.ts"));
    await expect(bundleWorker(dir, "src/index.ts")).rejects.toThrow();
  });

  it("is not kept when a file it read was written since its build began, so old code never sits under new files' key", async () => {
    // Written now: as if saved while esbuild read the sources, or by a build that finished after another front's.
    write("src/word.ts", 'export const word = "fresh";\n', false);
    expect(await bundleWorker(dir, "src/index.ts")).toContain('"fresh"');
    expect(existsSync(kept())).toBe(false);
    write("src/word.ts", 'export const word = "fresh";\n');
    await bundleWorker(dir, "src/index.ts");
    expect(existsSync(kept())).toBe(true);
  });
});

describe("the runtime's worker bundle", () => {
  it("carries zod's English messages and none of its other locales", async () => {
    // Every workerd process compiles and keeps what the bundle holds; `import { z }` brought
    // all of zod's locales (366 KB, a quarter of it), `import * as z` brings only English.
    const projectDir = join(import.meta.dirname, "../..");
    const script = await bundleWorker(projectDir, "src/index.ts");
    // esbuild heads each module it keeps with a comment naming its file.
    const locales = [...script.matchAll(/^\/\/ \S*node_modules\/zod\/v4\/locales\/(\S+)$/gm)].map((m) => m[1]);
    expect(locales).toEqual(["en.js"]);
  }, 60_000);
});
