import { describe, expect, it } from "vitest";
import { Refused } from "../../src/http/answer.js";
import { intParam, pageParams, seqParam } from "../../src/http/query.js";

/** The refusal `f` throws, or a failure when it throws none. */
function refusalOf(f: () => unknown): Refused {
  try {
    f();
  } catch (err) {
    if (err instanceof Refused) return err;
    throw err;
  }
  throw new Error("no refusal");
}

describe("query values of the log routes", () => {
  it("reads an integer, clamped to its maximum, with the fallback when absent or empty", () => {
    expect(intParam(undefined, "limit", 50, 200)).toBe(50);
    expect(intParam("", "limit", 50, 200)).toBe(50);
    expect(intParam("7", "limit", 50, 200)).toBe(7);
    expect(intParam("5000", "limit", 50, 200)).toBe(200);
    expect(intParam("0", "wait", 0, 30_000, 0)).toBe(0);
  });

  it("refuses with 400 invalid-query a value that is not a whole number of at least its minimum", () => {
    for (const raw of ["0", "-1", "1.5", "abc", "1e3", "9999999999"]) {
      const r = refusalOf(() => intParam(raw, "limit", 50, 200));
      expect(r.status, raw).toBe(400);
      expect(r.body, raw).toEqual({ error: `limit must be an integer of at least 1, not ${JSON.stringify(raw)}`, code: "invalid-query" });
    }
  });

  it("reads a cursor, and refuses one that is not", () => {
    expect(seqParam("0", "after")).toBe(0);
    expect(seqParam("42", "after")).toBe(42);
    expect(refusalOf(() => seqParam("x", "after")).body).toEqual({ error: 'after is not a valid cursor: "x"', code: "invalid-query" });
    // The same seq in a path is the path's fault, and says so.
    expect((refusalOf(() => seqParam("x", "seq", "invalid-param")).body as { code?: string }).code).toBe("invalid-param");
  });

  it("reads a page's after, before (a cursor or latest) and limit, never both directions", () => {
    expect(pageParams({ after: "3" })).toEqual({ after: 3, before: undefined, limit: 200 });
    expect(pageParams({ before: "latest", limit: "10" })).toEqual({ after: undefined, before: Number.MAX_SAFE_INTEGER, limit: 10 });
    expect(refusalOf(() => pageParams({ after: "1", before: "2" })).body).toEqual({ error: "give after or before, not both", code: "invalid-query" });
  });
});
