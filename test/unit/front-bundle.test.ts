import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { frontBundle } from "../../local-front/front-bundle.mjs";
import { removeDir } from "../support/front.js";

const dir = mkdtempSync(join(tmpdir(), "front-bundle-"));
afterAll(() => removeDir(dir));
mkdirSync(join(dir, "local-front/lib"), { recursive: true });
const write = (path: string, text: string) => writeFileSync(join(dir, path), text);
const run = (bundle: string) => execFileSync(process.execPath, [bundle], { encoding: "utf8" }).trim();

describe("the front's bundle", () => {
  it("runs the sources it was built from, with each module's import.meta where the module lies", async () => {
    write("local-front/main.ts", `import { where, word } from "./lib/a.js";\nconsole.log(word, where);\n`);
    write("local-front/lib/a.ts", `export const word: string = "one";\nexport const where = import.meta.dirname;\n`);
    expect(run(await frontBundle(dir))).toBe(`one ${join(dir, "local-front/lib")}`);
  });

  it("is reused while no source changed, and rebuilt when one did", async () => {
    const bundle = await frontBundle(dir);
    const built = statSync(bundle).mtimeMs;
    expect(statSync(await frontBundle(dir)).mtimeMs).toBe(built);
    write("local-front/lib/a.ts", `export const word: string = "two";\nexport const where = import.meta.dirname;\n`);
    expect(run(await frontBundle(dir))).toBe(`two ${join(dir, "local-front/lib")}`);
  });

  it("follows an import that changed, and refuses a source that does not build", async () => {
    write("local-front/lib/b.ts", `export const word = "three";\nexport const where = "b";\n`);
    write("local-front/main.ts", `import { where, word } from "./lib/b.js";\nconsole.log(word, where);\n`);
    expect(run(await frontBundle(dir))).toBe("three b");
    write("local-front/lib/b.ts", `export const word = ;\n`);
    await expect(frontBundle(dir)).rejects.toThrow(/Unexpected/);
    // The last good bundle is still there, named by a manifest that no longer matches.
    expect(readFileSync(join(dir, ".front/main.mjs"), "utf8")).toContain("three");
  });
});
