import { describe, expect, it } from "vitest";
import { decodeListCursor, encodeListCursor, parseSeqCursor } from "../../src/shared/cursors.js";
import { isThreadId, newThreadId } from "../../src/shared/ids.js";

describe("cursors", () => {
  it("parses seq cursors and refuses garbage", () => {
    expect(parseSeqCursor("0")).toBe(0);
    expect(parseSeqCursor("42")).toBe(42);
    for (const bad of ["", "-1", "01", "1.5", "abc", "1e3", "9999999999999999"]) expect(parseSeqCursor(bad), bad).toBeNull();
  });

  it("round-trips list cursors and refuses tampered ones", () => {
    const created = encodeListCursor({ sort: "created", n: 7 });
    expect(decodeListCursor(created)).toEqual({ sort: "created", n: 7 });
    const recent = encodeListCursor({ sort: "recent", n: 3, updatedAt: "2026-01-02T03:04:05.678Z" });
    expect(decodeListCursor(recent)).toEqual({ sort: "recent", n: 3, updatedAt: "2026-01-02T03:04:05.678Z" });
    for (const bad of ["", "%%", "YQ", encodeListCursor({ sort: "created", n: 7 }) + "x"]) expect(decodeListCursor(bad), bad).toBeNull();
  });
});

describe("thread ids", () => {
  it("are well formed, distinct, and sort by creation time", () => {
    const a = newThreadId(1_000);
    const b = newThreadId(2_000);
    expect(isThreadId(a) && isThreadId(b)).toBe(true);
    expect(a < b).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => newThreadId())).size).toBe(1000);
    expect(isThreadId("thr_short")).toBe(false);
  });
});
