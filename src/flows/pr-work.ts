import { CODES } from "../api/errors.js";
import type { Outcome } from "../api/outcome.js";
import { DEFAULT_BUILD_SEATS, roomKey, type BuildAgent, type CostPerMergedPr, type MergeFacts, type PrCost, type Receipt, type Round } from "../api/rooms.js";
import type { MessageAccepted, ThreadRow } from "../api/threads.js";
import { refused, valueOf } from "../http/answer.js";
import { callCode } from "../platform/code-call.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { hubLimits } from "../platform/hub-limits.js";
import { catalogOf, roomOf, threadOf, workspaceOf } from "../platform/stubs.js";
import { buildPrompt } from "../rules/build-prompt.js";
import { mergeReceipt } from "../rules/merge-receipt.js";
import { newId } from "../shared/ids.js";
import { createThread } from "./create-thread.js";
import { pullOf, worktreeAt } from "./review.js";

/** How many build threads one pull request may have at once: the hub's build seat limit (as `hubLimits` read it), or the default. */
export function buildSeatsOf(hub: Record<string, unknown>): { limit: number; source: "hub" | "default" } {
  return typeof hub.buildSeatLimit === "number" && hub.buildSeatLimit > 0 ? { limit: hub.buildSeatLimit, source: "hub" } : { limit: DEFAULT_BUILD_SEATS, source: "default" };
}

/**
 * `POST /workspaces/:name/prs/:number/agents`: a build thread in a worktree of the pull
 * request's branch at its head (never the registered checkout), with the pull request as
 * context in its first message.
 */
export async function startBuildThread(env: Env, config: RuntimeConfig, workspace: string, number: number, body: BuildAgent): Promise<{ threadId: string; worktree: string }> {
  const pull = await pullOf(env, body.repo, number);
  const seats = buildSeatsOf(await hubLimits(config.hubUrl));
  const live = (await catalogOf(env).prThreads(body.repo, number, "build")) as string[];
  if (live.length >= seats.limit)
    refused(409, `${body.repo}#${number} has ${live.length} build threads, its limit (${seats.source === "hub" ? "the hub's build seat limit" : "the default"}): retire one first`, CODES.buildSeatsFull, {
      limit: seats.limit,
      threads: live,
    });
  const id = newId("wt_");
  const tree = await worktreeAt(env, body.repo, number, id, "build");
  let threadId: string;
  try {
    ({ threadId } = await createThread(
      env,
      config,
      {
        workspace,
        title: body.title ?? `Build on ${body.repo}#${number}: ${pull.title}`.slice(0, 200),
        role: "fixer",
        type: "build",
        ...(body.engine ? { engine: body.engine } : {}),
        ...(body.model ? { model: body.model } : {}),
        ...(body.permissions ? { permissions: body.permissions } : {}),
      },
      undefined,
      undefined,
      { cwd: tree.path, mode: "build", pr: { repo: body.repo, number, room: null, worktreeId: id } },
    ));
  } catch (err) {
    await callCode(env, "POST", "/git/worktrees/remove", { id });
    throw err;
  }
  const sent = (await threadOf(env, threadId).postMessage({ text: buildPrompt(pull, body.repo, { path: tree.path, head: tree.head.sha }, body.title), from: "runtime-pr" }, `pr-build:${threadId}`)) as Outcome<MessageAccepted>;
  valueOf(sent);
  return { threadId, worktree: tree.path };
}

/**
 * `GET /workspaces/:name/prs/:number/receipt?repo=`: what merging would take, read only
 * (it never merges, nor writes to the code host): the verdict and checks at the exact head,
 * the base chain, the stacked pull requests and the plan, with what blocks it.
 */
export async function mergeReceiptOf(env: Env, workspace: string, number: number, repo: string): Promise<Receipt> {
  const facts = valueOf(await callCode<MergeFacts>(env, "GET", `/github/${repo}/prs/${number}/merge-facts`));
  const roomId = await workspaceOf(env, workspace).roomOf(roomKey(workspace, repo, number));
  const rounds = roomId ? ((await roomOf(env, roomId).allRounds()) as Round[]) : [];
  const judged = rounds.filter((r) => r.verdict !== null && r.state !== "failed").reverse();
  const here = judged.find((r) => (r.state === "ready" || r.state === "finalized") && r.head === facts.pull.head.sha);
  const verdict = here
    ? { roomId: roomId!, n: here.n, state: here.state, decision: here.verdict!.decision, head: here.head, findings: here.verdict!.findings.length }
    : null;
  const newest = judged[0] ? { n: judged[0].n, head: judged[0].head } : null;
  const receipt = mergeReceipt(facts, verdict, newest);
  // The rule names the repository as `:owner/:repo`: the plan is this one's.
  const plan = receipt.plan.map((s) => ({ ...s, method: s.method.replaceAll(":owner/:repo", repo) }));
  return { repo, pr: number, ...receipt, plan };
}

/**
 * `GET /metrics/cost-per-merged-pr`: what the threads that worked on each pull request
 * cost (its reviewers and builders, and their delegations), and per merged pull request as
 * the code host reports it merged.
 */
export async function costPerMergedPr(env: Env): Promise<CostPerMergedPr> {
  const rows = (await catalogOf(env).prCosts()) as Omit<PrCost, "merged">[];
  let unknown = 0;
  const prs: PrCost[] = await Promise.all(
    rows.map(async (r) => {
      const pull = await callCode<{ state: string }>(env, "GET", `/github/${r.repo}/prs/${r.pr}`);
      if (!pull.ok) unknown++;
      return { ...r, merged: pull.ok && pull.value.state === "merged" };
    }),
  );
  const merged = prs.filter((p) => p.merged);
  const sum = (list: PrCost[]) => list.reduce((n, p) => n + p.usd, 0);
  return {
    prs,
    merged: { count: merged.length, usd: sum(merged), perPr: merged.length ? sum(merged) / merged.length : null },
    all: { count: prs.length, usd: sum(prs) },
    unknown,
  };
}

/**
 * A pull request's worktree goes when the last live thread that works in it (the thread
 * that made it, its delegations and forks that share it) is retired, and is made again, at
 * the pull request's head, when one of them is restored. A worktree that cannot be made
 * again leaves the restore standing: the thread's next turn says its cwd is gone.
 */
export async function worktreeAfter(env: Env, row: ThreadRow, change: "retired" | "restored"): Promise<void> {
  const pr = row.spec.pr;
  if (!pr || !row.spec.worktree) return;
  if (change === "retired") {
    // The catalog hears of the retirement a moment later: this thread is not counted either way.
    const others = ((await catalogOf(env).worktreeSharers(pr.worktreeId)) as string[]).filter((id) => id !== row.id);
    if (others.length) return;
  }
  const done =
    change === "retired"
      ? await callCode(env, "POST", "/git/worktrees/remove", { id: pr.worktreeId })
      : await callCode(env, "POST", "/git/worktrees", { repo: pr.repo, pr: pr.number, id: pr.worktreeId, mode: row.spec.worktree });
  if (!done.ok) console.error(`thread ${row.id}: its worktree ${pr.worktreeId} was not ${change === "retired" ? "removed" : "made again"}: ${done.body.error}`);
}
