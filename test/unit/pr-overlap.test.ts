import { describe, expect, it } from "vitest";
import { hunksOf } from "../../src/rules/diff-hunks.js";
import { overlapPairs, type OverlapPull } from "../../src/rules/pr-overlap.js";

const patch = (at: number, removed: string[], added: string[]) =>
  [`@@ -${at},${removed.length + 2} +${at},${added.length + 2} @@`, " before", ...removed.map((l) => `-${l}`), ...added.map((l) => `+${l}`), " after"].join("\n");

let day = 0;
const pull = (number: number, title: string, files: OverlapPull["files"], body = ""): OverlapPull => ({
  number,
  title,
  body,
  createdAt: new Date(Date.UTC(2026, 10, 1 + day++)).toISOString(),
  files,
});

describe("a patch's hunks (src/rules/diff-hunks.ts)", () => {
  it("numbers the base lines a hunk removes, puts lines added in their place there, and an insertion before the base line it precedes", () => {
    const [h] = hunksOf("@@ -10,4 +10,5 @@ function f() {\n a\n-b\n+B\n+C\n c\n d\n\\ No newline at end of file");
    expect(h).toMatchObject({ oldStart: 10, oldLines: 4, newStart: 10, newLines: 5, added: ["B", "C"] });
    expect(h!.touched).toEqual([11]);
    expect(hunksOf("@@ -10,2 +10,3 @@\n a\n+new\n b")[0]!.touched).toEqual([11]);
  });

  it("reads a header without counts, and a hunk that adds to an empty base", () => {
    const hunks = hunksOf("@@ -3 +3 @@\n-x\n+y\n@@ -0,0 +1,2 @@\n+one\n+two");
    expect(hunks.map((h) => [h.oldStart, h.oldLines, h.touched])).toEqual([
      [3, 1, [3]],
      [0, 0, [1]],
    ]);
  });
});

describe("the overlap pass's judgement (src/rules/pr-overlap.ts)", () => {
  it("calls two changes of the same lines that add the same code a duplicate, the older first", () => {
    const fix = ["  if (!session.expiresAt || session.expiresAt < now) return null;"];
    const verdicts = overlapPairs([
      pull(7, "Reject expired sessions", [{ path: "src/auth/session.ts", previousPath: null, patch: patch(40, ["  return session;"], fix) }]),
      pull(9, "Sessions past their expiry were still accepted", [{ path: "src/auth/session.ts", previousPath: null, patch: patch(40, ["  return session;"], [...fix, "  return session;"]) }]),
      pull(11, "Document the billing export", [{ path: "docs/billing.md", previousPath: null, patch: patch(1, [], ["Exports run nightly."]) }]),
    ]);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ older: 7, newer: 9, relation: "duplicate" });
    expect(verdicts[0]!.evidence.sharedFiles).toEqual(["src/auth/session.ts"]);
    expect(verdicts[0]!.evidence.overlappingHunks).toEqual([{ path: "src/auth/session.ts", older: "40-42", newer: "40-42" }]);
  });

  it("calls different changes to one file complementary, and leaves out pairs that share only a lockfile", () => {
    const verdicts = overlapPairs([
      pull(1, "Paginate the user list", [
        { path: "src/api/users.ts", previousPath: null, patch: patch(10, ["  return db.users.all();"], ["  return db.users.page(cursor, limit);"]) },
        { path: "package-lock.json", previousPath: null, patch: patch(5, ['  "version": "1.0.0"'], ['  "version": "1.0.1"']) },
      ]),
      pull(2, "Validate email addresses on signup", [{ path: "src/api/users.ts", previousPath: null, patch: patch(200, ["  const email = body.email;"], ["  const email = parseEmail(body.email);"]) }]),
      pull(3, "Bump the logger", [{ path: "package-lock.json", previousPath: null, patch: patch(5, ['  "version": "1.0.0"'], ['  "version": "1.0.2"']) }]),
    ]);
    expect(verdicts.map((v) => [v.older, v.newer, v.relation])).toEqual([[1, 2, "complementary"]]);
  });

  it("in a manifest, counts only a line both edit, and calls them one piece of work only when they put the same there", () => {
    const req = (n: number, title: string, body: string[]) => pull(n, title, [{ path: "requirements.txt", previousPath: null, patch: ["@@ -3,3 +3,3 @@", " httpx>=0.27", ...body, " pandas>=2.1"].join("\n") }]);
    const verdicts = overlapPairs([
      req(1, "Pin numpy below 2", ["-numpy>=1.24", "+numpy>=1.24,<2"]),
      req(2, "Add lightgbm", [" numpy>=1.24", "+lightgbm>=4.3"]),
      req(3, "Hold numpy back", ["-numpy>=1.24", "+numpy>=1.24,<2"]),
    ]);
    expect(verdicts.map((v) => [v.older, v.newer, v.relation])).toEqual([[1, 3, "duplicate"]]);
  });

  it("meets a rename with an edit of the file under its old name", () => {
    const verdicts = overlapPairs([
      pull(1, "Move invoices into billing", [{ path: "src/billing/invoice.ts", previousPath: "src/invoice.ts", patch: null }]),
      pull(2, "Round invoice totals", [{ path: "src/invoice.ts", previousPath: null, patch: patch(30, ["  return total;"], ["  return Math.round(total * 100) / 100;"]) }]),
    ]);
    expect(verdicts.map((v) => v.evidence.sharedFiles)).toEqual([["src/invoice.ts"]]);
  });

  it("weighs words by how rare they are among the open pull requests", () => {
    const many = Array.from({ length: 10 }, (_, i) => pull(100 + i, `api endpoint cleanup ${["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"][i]}`, [{ path: `src/x${i}.ts`, previousPath: null, patch: patch(1, [], [`export const v${i} = ${i};`]) }]));
    expect(overlapPairs(many)).toEqual([]);
  });
});
