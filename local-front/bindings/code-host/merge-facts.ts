import type { PullParams } from "../../../src/api/code-host.js";
import { ok, type Outcome } from "../../../src/api/outcome.js";
import type { MergeFacts } from "../../../src/api/rooms.js";
import { deadline, hostRefusal, onHost, type HostClient } from "./clients.js";
import { pullOf } from "./reads.js";

/**
 * What a merge receipt is computed from (docs/code-host.md, "Reviews"), read from the code
 * host and nothing written: the checks at the exact head, the base branch's protection,
 * each reviewer's standing review, the branches down to the default one, and the pull
 * requests stacked on this one.
 */

type Gh = Record<string, any>;

/** Branches walked down to the default one: a stack deeper than this is cut there. */
const MAX_CHAIN = 20;

const pullName = (p: PullParams) => `pull request ${p.owner}/${p.repo}#${p.number}`;

/** Every page of a list, at most `cap` items. */
const pages = <T>(o: HostClient["octokit"], route: any, params: Record<string, unknown>, pick: (data: any) => T[], cap = 1000): Promise<T[]> =>
  o.paginate(route, { ...params, per_page: 100, ...deadline() }, (res: { data: any }, done: () => void) => {
    const items = pick(res.data);
    if (items.length < 100) done();
    return items;
  }).then((all: T[]) => all.slice(0, cap));

/**
 * A reviewer's standing review, as GitHub counts it for approval: the latest that approved,
 * asked for changes or was dismissed; a comment after an approval does not take it back.
 * A reviewer who only commented stands by the latest comment.
 */
function standing(reviews: Gh[]): MergeFacts["reviews"] {
  const by = new Map<string, Gh>();
  for (const r of reviews) {
    if (r.state === "PENDING") continue;
    const who = (r.user?.login ?? "ghost") as string;
    const before = by.get(who.toLowerCase());
    if (!before || r.state !== "COMMENTED" || before.state === "COMMENTED") by.set(who.toLowerCase(), r);
  }
  return [...by.values()].map((r) => ({ author: r.user?.login ?? "ghost", state: r.state, commitId: r.commit_id ?? null }));
}

export async function mergeFacts(client: HostClient, p: PullParams): Promise<Outcome<MergeFacts>> {
  const pull = await pullOf(client, p);
  if (!pull.ok) return pull;
  const repo = { owner: p.owner, repo: p.repo };
  const what = pullName(p);
  const [info, checks, statuses, protection, reviews, stacked] = await Promise.all([
    onHost(client, `repository ${p.owner}/${p.repo}`, (o) => o.rest.repos.get({ ...repo, ...deadline() })),
    // Octokit's paginate hands over the runs themselves, not GitHub's `{total_count, check_runs}`.
    onHost(client, what, (o) => pages(o, o.rest.checks.listForRef, { ...repo, ref: pull.value.head.sha }, (d: Gh[]) => d)),
    commitStatuses(client, p, pull.value.head.sha),
    protectionOf(client, p, pull.value.base.ref),
    onHost(client, what, (o) => pages(o, o.rest.pulls.listReviews, { ...repo, pull_number: p.number }, (d: Gh[]) => d)),
    onHost(client, what, (o) => pages(o, o.rest.pulls.list, { ...repo, state: "open", base: pull.value.head.ref }, (d: Gh[]) => d)),
  ]);
  if (!info.ok) return info;
  if (!checks.ok) return checks;
  if (!statuses.ok) return statuses;
  if (!protection.ok) return protection;
  if (!reviews.ok) return reviews;
  if (!stacked.ok) return stacked;
  const defaultBranch = info.value.data.default_branch as string;
  const chain = await baseChain(client, p, pull.value.base.ref, defaultBranch);
  if (!chain.ok) return chain;
  return ok({
    pull: pull.value,
    defaultBranch,
    checks: [
      ...checks.value.map((c) => ({ name: c.name as string, status: c.status as string, conclusion: (c.conclusion as string | null) ?? null })),
      // A context reported both ways is counted once, by its check run.
      ...statuses.value.filter((s) => !checks.value.some((c) => c.name === s.name)),
    ],
    protection: protection.value.rules,
    ...(protection.value.unreadable ? { protectionUnreadable: protection.value.unreadable } : {}),
    reviews: standing(reviews.value),
    baseChain: chain.value,
    stacked: stacked.value.map((s) => ({ number: s.number, title: s.title ?? "", head: s.head?.ref ?? "" })),
  });
}

/**
 * The base branch's protection: null when it has none (GitHub's 404 `Branch not protected`,
 * or `Branch not found`); `unreadable` when the code host would not show it. GitHub shows
 * protection to admins only and answers anyone else 404 `Not Found` (or 403): reading that
 * as "not protected" would make a receipt ready that is not.
 */
async function protectionOf(client: HostClient, p: PullParams, branch: string): Promise<Outcome<{ rules: MergeFacts["protection"]; unreadable?: string }>> {
  let data: Gh;
  try {
    data = (await client.octokit.rest.repos.getBranchProtection({ owner: p.owner, repo: p.repo, branch, ...deadline() })).data as Gh;
  } catch (err) {
    const e = err as { status?: number; response?: { data?: { message?: unknown } } };
    const said = String(e.response?.data?.message ?? "");
    if (e.status === 404 && /^Branch not (protected|found)$/i.test(said)) return ok({ rules: null });
    if (e.status === 404 || e.status === 403) return ok({ rules: null, unreadable: `${e.status} ${said || "from the code host"} for account ${client.account}` });
    return hostRefusal(err, client, `the protection of branch ${branch} in ${p.owner}/${p.repo}`);
  }
  const rules = data;
  const checks = rules.required_status_checks;
  const required = new Set<string>([...(checks?.contexts ?? []), ...((checks?.checks ?? []) as Gh[]).map((c) => c.context as string)]);
  return ok({ rules: { requiredChecks: [...required], requiredReviews: rules.required_pull_request_reviews?.required_approving_review_count ?? 0 } });
}

/**
 * The commit statuses at `sha`, GitHub's older API, through which a required context may
 * report instead of a check run: the latest of each context, as a check. A code host
 * without the API (404) has none.
 */
async function commitStatuses(client: HostClient, p: PullParams, sha: string): Promise<Outcome<MergeFacts["checks"]>> {
  const got = await onHost(client, pullName(p), (o) => o.rest.repos.getCombinedStatusForRef({ owner: p.owner, repo: p.repo, ref: sha, per_page: 100, ...deadline() }));
  if (!got.ok) return got.status === 404 ? ok([]) : got;
  return ok(
    ((got.value.data.statuses ?? []) as Gh[]).map((s) => ({
      name: s.context as string,
      status: s.state === "pending" ? "in_progress" : "completed",
      conclusion: s.state === "pending" ? null : s.state === "success" ? "success" : "failure",
    })),
  );
}

/**
 * From the base branch down: each branch with the open pull request that merges it further,
 * until the default branch (whose `pr` is null) or a branch no open pull request carries.
 * A cycle of pull requests stops at the first branch seen twice.
 */
async function baseChain(client: HostClient, p: PullParams, base: string, defaultBranch: string): Promise<Outcome<MergeFacts["baseChain"]>> {
  const chain: MergeFacts["baseChain"] = [];
  const seen = new Set<string>();
  let branch = base;
  while (!seen.has(branch) && chain.length < MAX_CHAIN) {
    seen.add(branch);
    if (branch === defaultBranch) {
      chain.push({ branch, pr: null });
      break;
    }
    const at = branch;
    const carrier = await onHost(client, `repository ${p.owner}/${p.repo}`, (o) => o.rest.pulls.list({ owner: p.owner, repo: p.repo, state: "open", head: `${p.owner}:${at}`, per_page: 1, ...deadline() }));
    if (!carrier.ok) return carrier;
    const next = carrier.value.data[0];
    chain.push({ branch, pr: next?.number ?? null });
    if (!next) break;
    branch = next.base.ref;
  }
  return ok(chain);
}
