import { describe, expect, it } from "vitest";
import type { MergeFacts, Receipt } from "../../src/api/rooms.js";
import { mergeReceipt } from "../../src/rules/merge-receipt.js";

const HEAD = "a".repeat(40);
const OLD = "b".repeat(40);

/** A pull request nothing blocks: open, on main, its required check green, approved at its head, reviewed by a room at its head. */
function facts(over: Partial<MergeFacts> = {}, pull: Partial<MergeFacts["pull"]> = {}): MergeFacts {
  return {
    pull: {
      number: 7,
      title: "Reject expired sessions",
      body: "",
      author: "ana",
      state: "open",
      draft: false,
      head: { ref: "fix/sessions", sha: HEAD },
      base: { ref: "main", sha: "c".repeat(40) },
      labels: [],
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-02T00:00:00Z",
      url: "https://github.com/acme/api/pull/7",
      ...pull,
    },
    defaultBranch: "main",
    checks: [
      { name: "ci/test", status: "completed", conclusion: "success" },
      { name: "lint", status: "completed", conclusion: "failure" },
    ],
    protection: { requiredChecks: ["ci/test"], requiredReviews: 1 },
    reviews: [{ author: "bo", state: "APPROVED", commitId: HEAD }],
    baseChain: [{ branch: "main", pr: null }],
    stacked: [],
    ...over,
  };
}

const VERDICT: Receipt["verdict"] = { roomId: "room_1", n: 2, state: "finalized", decision: "approve", head: HEAD, findings: 0 };

const codes = (r: ReturnType<typeof mergeReceipt>) => r.blocked.map((b) => b.code);

describe("the merge receipt (src/rules/merge-receipt.ts)", () => {
  it("is ready when nothing blocks, a failing check the protection does not require among its checks", () => {
    const r = mergeReceipt(facts(), VERDICT, { n: 2, head: HEAD });
    expect(r.blocked).toEqual([]);
    expect(r.ready).toBe(true);
    expect(r.checks).toEqual([
      { name: "ci/test", status: "completed", conclusion: "success", required: true },
      { name: "lint", status: "completed", conclusion: "failure", required: false },
    ]);
    expect(r.plan).toEqual([{ step: `Merge #7 at ${HEAD.slice(0, 12)}`, method: `PUT /repos/:owner/:repo/pulls/7/merge sha=${HEAD}`, expects: `merged at ${HEAD}` }]);
    expect(r).toMatchObject({ head: { sha: HEAD }, base: { ref: "main" }, verdict: VERDICT });
  });

  it("is ready with no protection and no approval", () => {
    expect(mergeReceipt(facts({ protection: null, reviews: [] }), VERDICT, null).ready).toBe(true);
  });
  it("is not ready when the protection could not be read: what it requires is unknown", () => {
    const r = mergeReceipt(facts({ protection: null, reviews: [], protectionUnreadable: "403 for account bot" }), VERDICT, null);
    expect(r.blocked).toEqual([{ code: "protection-unreadable", reason: expect.stringContaining("403 for account bot") }]);
    expect(r.ready).toBe(false);
  });

  it("blocks on a required check with no run at the head, one not finished, and one failing", () => {
    const protection = { requiredChecks: ["ci/test", "build", "e2e"], requiredReviews: 1 };
    const checks = [
      { name: "ci/test", status: "completed", conclusion: "timed_out" },
      { name: "build", status: "in_progress", conclusion: null },
    ];
    const r = mergeReceipt(facts({ protection, checks }), VERDICT, null);
    expect(r.blocked).toEqual([
      { code: "check-failing", reason: expect.stringContaining('"ci/test" concluded timed_out') },
      { code: "check-pending", reason: expect.stringContaining('"build"') },
      { code: "check-missing", reason: expect.stringContaining('"e2e" has no run') },
    ]);
    expect(r.ready).toBe(false);
    for (const conclusion of ["neutral", "skipped"])
      expect(codes(mergeReceipt(facts({ checks: [{ name: "ci/test", status: "completed", conclusion }] }), VERDICT, null))).toEqual([]);
  });

  it("counts only approvals at the exact head toward the protection's number", () => {
    const stale = facts({ reviews: [{ author: "bo", state: "APPROVED", commitId: OLD }, { author: "cy", state: "COMMENTED", commitId: HEAD }] });
    const r = mergeReceipt(stale, VERDICT, null);
    expect(codes(r)).toEqual(["approval-missing"]);
    expect(r.blocked[0]!.reason).toContain("needs 1 approval");
    const two = facts({ protection: { requiredChecks: [], requiredReviews: 2 } });
    expect(codes(mergeReceipt(two, VERDICT, null))).toEqual(["approval-missing"]);
  });

  it("blocks on a reviewer's latest review requesting changes, at any commit, and names them", () => {
    const r = mergeReceipt(facts({ reviews: [{ author: "bo", state: "APPROVED", commitId: HEAD }, { author: "dee", state: "CHANGES_REQUESTED", commitId: OLD }] }), VERDICT, null);
    expect(r.blocked).toEqual([{ code: "changes-requested", reason: expect.stringContaining("dee requested changes") }]);
  });

  it("calls a verdict at an older head stale, naming both commits, and no round at all missing", () => {
    const stale = mergeReceipt(facts(), null, { n: 3, head: OLD });
    expect(codes(stale)).toEqual(["verdict-stale"]);
    expect(stale.blocked[0]!.reason).toContain(OLD);
    expect(stale.blocked[0]!.reason).toContain(HEAD);
    expect(mergeReceipt(facts(), null, null).blocked).toEqual([{ code: "verdict-missing", reason: expect.stringContaining("start a round") }]);
    // A round at this head without its verdict yet is missing, not stale.
    expect(codes(mergeReceipt(facts(), null, { n: 4, head: HEAD }))).toEqual(["verdict-missing"]);
  });

  it("blocks a draft, a closed and a merged pull request", () => {
    expect(codes(mergeReceipt(facts({}, { draft: true }), VERDICT, null))).toEqual(["draft"]);
    const closed = mergeReceipt(facts({}, { state: "closed" }), VERDICT, null);
    expect(closed.blocked).toEqual([{ code: "closed", reason: expect.stringContaining("reopen") }]);
    expect(mergeReceipt(facts({}, { state: "merged" }), VERDICT, null).blocked).toEqual([{ code: "closed", reason: expect.stringContaining("already merged") }]);
  });

  it("plans a stacked pull request: its base chain from the default branch up, then it, then the pull requests on it", () => {
    // #7 (fix/sessions) sits on #6 (feat/b), which sits on #5 (feat/a), which targets main; #8 sits on #7.
    const r = mergeReceipt(
      facts(
        {
          baseChain: [
            { branch: "feat/b", pr: 6 },
            { branch: "feat/a", pr: 5 },
            { branch: "main", pr: null },
          ],
          stacked: [{ number: 8, title: "Log expiries", head: "log/expiries" }],
        },
        { base: { ref: "feat/b", sha: OLD } },
      ),
      VERDICT,
      null,
    );
    expect(r.blocked).toEqual([{ code: "base-not-default", reason: expect.stringContaining("merge #5, then #6 first") }]);
    expect(r.ready).toBe(false);
    expect(r.plan.map((s) => s.method)).toEqual([
      "PUT /repos/:owner/:repo/pulls/5/merge",
      "PATCH /repos/:owner/:repo/pulls/6 base=main",
      "PUT /repos/:owner/:repo/pulls/6/merge",
      "PATCH /repos/:owner/:repo/pulls/7 base=main",
      `PUT /repos/:owner/:repo/pulls/7/merge sha=${HEAD}`,
      "PATCH /repos/:owner/:repo/pulls/8 base=main",
    ]);
    expect(r.plan.at(-2)!.expects).toBe(`merged at ${HEAD}`);
    expect(r.plan.at(-1)!.expects).toBe("#8's base is main");
    expect(r.baseChain).toHaveLength(3);
    expect(r.stacked).toEqual([{ number: 8, title: "Log expiries", head: "log/expiries" }]);
  });

  it("retargets the lowest pull request of a chain the code host did not follow down to the default branch", () => {
    const r = mergeReceipt(facts({ baseChain: [{ branch: "feat/b", pr: 6 }] }, { base: { ref: "feat/b", sha: OLD } }), VERDICT, null);
    expect(r.plan.map((s) => s.method).slice(0, 2)).toEqual(["PATCH /repos/:owner/:repo/pulls/6 base=main", "PUT /repos/:owner/:repo/pulls/6/merge"]);
  });

  it("says which branch of the chain no pull request carries to the default branch", () => {
    const r = mergeReceipt(facts({ baseChain: [{ branch: "feat/b", pr: null }] }, { base: { ref: "feat/b", sha: OLD } }), VERDICT, null);
    expect(r.blocked).toEqual([{ code: "base-not-default", reason: expect.stringContaining("no open pull request carries feat/b") }]);
    expect(r.plan[0]!.method).toContain("POST /repos/:owner/:repo/pulls head=feat/b base=main");
  });

  it("says what to do in one sentence for every reason", () => {
    const r = mergeReceipt(
      facts({ checks: [], reviews: [{ author: "dee", state: "CHANGES_REQUESTED", commitId: HEAD }], baseChain: [{ branch: "feat/b", pr: 6 }, { branch: "main", pr: null }] }, { draft: true, state: "closed", base: { ref: "feat/b", sha: OLD } }),
      null,
      { n: 1, head: OLD },
    );
    expect(codes(r).sort()).toEqual(["approval-missing", "base-not-default", "changes-requested", "check-missing", "closed", "draft", "verdict-stale"]);
    // What holds, a colon, what to do, one full stop.
    for (const b of r.blocked) {
      expect(b.reason).toMatch(/^\S.*: .+\.$/);
      expect(b.reason.slice(0, -1)).not.toMatch(/[.!?](\s|$)/);
    }
  });
});
