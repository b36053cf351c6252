import type { Blocked, MergeFacts, MergeStep, Receipt, ReceiptCheck } from "../api/rooms.js";

/** Conclusions GitHub's branch protection lets through. */
const PASSING = new Set(["success", "neutral", "skipped"]);

const short = (sha: string) => sha.slice(0, 12);

/**
 * What merging a pull request would take, from what the code host says of it: the checks
 * and reviews at its exact head, its base chain down to the default branch, the pull
 * requests stacked on it, and the room's verdict at that head (`verdict`; `newestAnyHead`:
 * the room's newest round with a verdict at any head, to tell a stale verdict from none).
 * Each blocked reason says what to do. It reads; the plan is for a person or a program to
 * carry out, step by step. Paths name `:owner/:repo`, the receipt's `repo`.
 */
export function mergeReceipt(facts: MergeFacts, verdict: Receipt["verdict"], newestAnyHead: { n: number; head: string } | null): Omit<Receipt, "repo" | "pr"> {
  const { pull, defaultBranch, protection } = facts;
  const head = pull.head.sha;
  const blocked: Blocked[] = [];

  if (pull.state !== "open")
    blocked.push({
      code: "closed",
      reason: pull.state === "merged" ? `#${pull.number} is already merged: there is nothing left to merge.` : `#${pull.number} is closed: reopen it before merging.`,
    });
  if (facts.protectionUnreadable)
    blocked.push({
      code: "protection-unreadable",
      reason: `The protection of ${pull.base.ref} could not be read (${facts.protectionUnreadable}), so its required checks and approvals are unknown: give the code-host account the right to read it, or check them on the code host.`,
    });
  if (pull.draft) blocked.push({ code: "draft", reason: `#${pull.number} is a draft: mark it ready for review.` });

  const required = new Set(protection?.requiredChecks ?? []);
  const checks: ReceiptCheck[] = facts.checks.map((c) => ({ ...c, required: required.has(c.name) }));
  for (const name of required) {
    const runs = checks.filter((c) => c.name === name);
    const failing = runs.find((c) => !PASSING.has(c.conclusion ?? ""));
    if (runs.length === 0) blocked.push({ code: "check-missing", reason: `Required check "${name}" has no run at ${short(head)}: run it on this head.` });
    else if (runs.some((c) => c.status !== "completed"))
      blocked.push({ code: "check-pending", reason: `Required check "${name}" has not finished at ${short(head)}: wait for it to complete.` });
    else if (failing)
      blocked.push({ code: "check-failing", reason: `Required check "${name}" concluded ${failing.conclusion ?? "without a conclusion"} at ${short(head)}: fix it and push, or re-run it.` });
  }

  for (const r of facts.reviews)
    if (r.state === "CHANGES_REQUESTED") blocked.push({ code: "changes-requested", reason: `${r.author} requested changes: address them and ask ${r.author} to review again, or dismiss the review.` });
  const needed = protection?.requiredReviews ?? 0;
  const approvals = facts.reviews.filter((r) => r.state === "APPROVED" && r.commitId === head).length;
  if (approvals < needed)
    blocked.push({
      code: "approval-missing",
      reason: `The base's protection needs ${needed} approval${needed === 1 ? "" : "s"} at ${short(head)} and it has ${approvals}: ask for ${needed - approvals} more approving review${needed - approvals === 1 ? "" : "s"} of this head.`,
    });

  if (verdict === null) {
    if (newestAnyHead && newestAnyHead.head !== head)
      blocked.push({
        code: "verdict-stale",
        reason: `Round ${newestAnyHead.n} reviewed ${newestAnyHead.head}, but the head is now ${head}: start a new round on this head.`,
      });
    else
      blocked.push({
        code: "verdict-missing",
        reason: newestAnyHead
          ? `Round ${newestAnyHead.n} at ${short(head)} has no verdict: wait for it to be ready, or start a new round if it failed.`
          : `No round has reviewed ${short(head)}: start a round and wait for its verdict.`,
      });
  }

  // From the base down; the pull request nearest the default branch merges first.
  const chain: { branch: string; pr: number | null }[] = [];
  for (const link of facts.baseChain) {
    if (link.branch === defaultBranch) break;
    chain.push(link);
  }
  // A base the chain does not carry to the default branch is a link no pull request carries.
  if (pull.base.ref !== defaultBranch && chain.length === 0) chain.push({ branch: pull.base.ref, pr: null });
  const broken = chain.find((l) => l.pr === null);
  if (pull.base.ref !== defaultBranch) {
    const carriers = chain.filter((l) => l.pr !== null).map((l) => `#${l.pr}`);
    blocked.push({
      code: "base-not-default",
      reason: broken
        ? `Its base ${pull.base.ref} is not ${defaultBranch}, and no open pull request carries ${broken.branch} further toward ${defaultBranch}: open one from ${broken.branch}, or retarget #${pull.number} to ${defaultBranch}.`
        : `Its base is ${pull.base.ref}, not ${defaultBranch}: merge ${carriers.reverse().join(", then ")} first, as the plan orders, and retarget #${pull.number} to ${defaultBranch}.`,
    });
  }

  const plan: MergeStep[] = [];
  const retarget = (n: number): MergeStep => ({
    step: `Retarget #${n} to ${defaultBranch}`,
    method: `PATCH /repos/:owner/:repo/pulls/${n} base=${defaultBranch}`,
    expects: `#${n}'s base is ${defaultBranch}`,
  });
  for (const [k, link] of [...chain.entries()].reverse()) {
    if (link.pr === null) {
      plan.push({
        step: `Open a pull request from ${link.branch} to ${defaultBranch}, and merge it`,
        method: `POST /repos/:owner/:repo/pulls head=${link.branch} base=${defaultBranch}, then PUT /repos/:owner/:repo/pulls/:number/merge`,
        expects: `${link.branch} merged into ${defaultBranch}`,
      });
      continue;
    }
    // Each targets the next branch down; all but the lowest target one merged away by then.
    if (facts.baseChain[k + 1]?.branch !== defaultBranch) plan.push(retarget(link.pr));
    plan.push({ step: `Merge #${link.pr} (${link.branch}) into ${defaultBranch}`, method: `PUT /repos/:owner/:repo/pulls/${link.pr}/merge`, expects: `#${link.pr} merged into ${defaultBranch}` });
  }
  if (pull.base.ref !== defaultBranch) plan.push(retarget(pull.number));
  plan.push({ step: `Merge #${pull.number} at ${short(head)}`, method: `PUT /repos/:owner/:repo/pulls/${pull.number}/merge sha=${head}`, expects: `merged at ${head}` });
  for (const s of facts.stacked) plan.push(retarget(s.number));

  return { head: pull.head, base: pull.base, verdict, checks, baseChain: facts.baseChain, stacked: facts.stacked, plan, blocked, ready: blocked.length === 0 };
}
