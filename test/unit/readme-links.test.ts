import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const readme = readFileSync(resolve(root, "README.md"), "utf8");
const docs = readdirSync(resolve(root, "docs")).filter((f) => f.endsWith(".md"));

/** Each `docs/<name>.md` the README names, as a link or in backticks. */
function named(text: string): Set<string> {
  return new Set([...text.matchAll(/docs\/([A-Za-z0-9_-]+\.md)/g)].map((m) => m[1]!));
}

describe("the README is the way into the docs", () => {
  it("names every doc in docs/", () => {
    const missing = docs.filter((d) => !named(readme).has(d));
    expect(missing, "docs the README does not name").toEqual([]);
  });

  it("names no doc that does not exist", () => {
    const dangling = [...named(readme)].filter((d) => !docs.includes(d));
    expect(dangling, "docs the README names that are not in docs/").toEqual([]);
  });

  it("lists every doc in its layout table", () => {
    const layout = readme.slice(readme.indexOf("## Layout"));
    const row = layout.split("\n").find((l) => l.startsWith("| `docs/`"));
    expect(row, "the layout table's docs/ row").toBeDefined();
    expect(docs.filter((d) => !row!.includes(d))).toEqual([]);
  });
});
