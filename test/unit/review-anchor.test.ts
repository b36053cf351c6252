import { describe, expect, it } from "vitest";
import { anchorable } from "../../src/rules/review-anchor.js";

// Base lines 10..14 become head lines 10..15: line 11 `b` is replaced by `B` and `C`.
const modified = { path: "src/a.ts", patch: "@@ -10,5 +10,6 @@ function f() {\n a\n-b\n+B\n+C\n c\n d\n e\n\\ No newline at end of file" };
const added = { path: "src/new.ts", patch: "@@ -0,0 +1,3 @@\n+one\n+two\n+three" };
const removed = { path: "src/old.ts", patch: "@@ -1,2 +0,0 @@\n-gone\n-too" };
const twoHunks = { path: "src/b.ts", patch: "@@ -3 +3 @@\n-x\n+y\n@@ -40,3 +41,3 @@\n p\n-q\n+Q\n r" };
const binary = { path: "logo.png", patch: null };
const files = [modified, added, removed, twoHunks, binary];

const at = (path: string, line: number, side: "RIGHT" | "LEFT" = "RIGHT") => anchorable(files, { path, line, side });

describe("where a review comment can be placed (src/rules/review-anchor.ts)", () => {
  it("places RIGHT on the head's added and context lines, and nowhere past the hunk", () => {
    for (const line of [10, 11, 12, 13, 14, 15]) expect(at("src/a.ts", line)).toEqual({ ok: true });
    expect(at("src/a.ts", 9)).toEqual({ ok: false, reason: "line-outside-diff" });
    expect(at("src/a.ts", 16)).toEqual({ ok: false, reason: "line-outside-diff" });
  });

  it("places LEFT on the base's removed and context lines, by the base's numbering", () => {
    for (const line of [10, 11, 12, 13, 14]) expect(at("src/a.ts", line, "LEFT")).toEqual({ ok: true });
    // Head line 15 exists, base line 15 is past the hunk.
    expect(at("src/a.ts", 15, "LEFT")).toEqual({ ok: false, reason: "line-outside-diff" });
  });

  it("has no LEFT lines in a new file and no RIGHT lines in a deleted one", () => {
    expect(at("src/new.ts", 1)).toEqual({ ok: true });
    expect(at("src/new.ts", 3)).toEqual({ ok: true });
    expect(at("src/new.ts", 1, "LEFT")).toEqual({ ok: false, reason: "line-outside-diff" });
    expect(at("src/old.ts", 2, "LEFT")).toEqual({ ok: true });
    expect(at("src/old.ts", 1)).toEqual({ ok: false, reason: "line-outside-diff" });
  });

  it("reads every hunk of a file, a header without counts among them, and not the gap between them", () => {
    expect(at("src/b.ts", 3)).toEqual({ ok: true });
    expect(at("src/b.ts", 3, "LEFT")).toEqual({ ok: true });
    expect(at("src/b.ts", 4)).toEqual({ ok: false, reason: "line-outside-diff" });
    expect(at("src/b.ts", 20)).toEqual({ ok: false, reason: "line-outside-diff" });
    expect(at("src/b.ts", 43)).toEqual({ ok: true });
    expect(at("src/b.ts", 44)).toEqual({ ok: false, reason: "line-outside-diff" });
    expect(at("src/b.ts", 42, "LEFT")).toEqual({ ok: true });
    expect(at("src/b.ts", 43, "LEFT")).toEqual({ ok: false, reason: "line-outside-diff" });
  });

  it("anchors nothing in a file the diff does not name, or one without a patch", () => {
    expect(at("src/elsewhere.ts", 1)).toEqual({ ok: false, reason: "path-not-in-diff" });
    expect(at("SRC/a.ts", 10)).toEqual({ ok: false, reason: "path-not-in-diff" });
    expect(at("logo.png", 1)).toEqual({ ok: false, reason: "no-patch" });
  });
});
