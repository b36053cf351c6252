/**
 * Where a pull request's branches point and what it changes. With a checkout, asked of git
 * on every request, so commits pushed to a branch show as they would on GitHub; without
 * one, made-up but stable shas and the seed's files.
 */
import { notFound, GitHubError } from "./errors.js";
import { GitError } from "./git-diff.js";
import { comparisonOfSeedFiles, type Comparison } from "./patch.js";
import { sha1, type Pull, type Repo } from "./store.js";

export interface Tips {
  head: string;
  base: string;
  /** false: the branch is not in the checkout, and the sha is made up. */
  headFound: boolean;
  baseFound: boolean;
}

const madeUpHead = (repo: Repo, pull: Pull) => sha1(`${repo.owner}/${repo.name}#${pull.number}:${pull.head}`);
const madeUpBranch = (repo: Repo, branch: string) => sha1(`${repo.owner}/${repo.name}:${branch}`);

export async function tipsOf(repo: Repo, pulls: Pull[]): Promise<Map<Pull, Tips>> {
  const shas = repo.git ? await gitCall(repo.git.resolve(pulls.flatMap((p) => [p.head, p.base]))) : null;
  return new Map(
    pulls.map((p) => {
      const head = shas ? shas.get(p.head) : madeUpHead(repo, p);
      const base = shas ? shas.get(p.base) : madeUpBranch(repo, p.base);
      return [p, { head: head ?? madeUpHead(repo, p), base: base ?? madeUpBranch(repo, p.base), headFound: !!head, baseFound: !!base }];
    }),
  );
}

export async function tipsOfOne(repo: Repo, pull: Pull): Promise<Tips> {
  return (await tipsOf(repo, [pull])).get(pull)!;
}

export async function comparisonOf(repo: Repo, pull: Pull, tips: Tips): Promise<Comparison> {
  if (!repo.git) return comparisonOfSeedFiles(pull.files, (filename) => sha1(`${repo.owner}/${repo.name}#${pull.number}:${filename}`));
  for (const [branch, found] of [[pull.head, tips.headFound], [pull.base, tips.baseFound]] as const)
    if (!found) throw notFound(`No commit found for branch "${branch}" of pull request #${pull.number}: it is not in the repository`);
  return gitCall(repo.git.compare(tips.base, tips.head));
}

/** The commit `ref` (a sha or a branch name) names, or null when there is none. */
export async function commitOf(repo: Repo, ref: string): Promise<string | null> {
  if (repo.git) return (await gitCall(repo.git.resolve([ref]))).get(ref) ?? null;
  if (/^[0-9a-f]{40}$/i.test(ref)) return ref.toLowerCase();
  const pulls = [...repo.pulls.values()].sort((a, b) => b.number - a.number);
  const headOf = pulls.find((p) => p.head === ref);
  if (headOf) return madeUpHead(repo, headOf);
  return branchesWithoutGit(repo).has(ref) ? madeUpBranch(repo, ref) : null;
}

export async function branchExists(repo: Repo, branch: string): Promise<boolean> {
  if (repo.git) return !!(await gitCall(repo.git.resolve([`refs/heads/${branch}`]))).get(`refs/heads/${branch}`);
  return branchesWithoutGit(repo).has(branch);
}

/** Without a checkout, the branches are the ones the seed names. */
function branchesWithoutGit(repo: Repo): Set<string> {
  return new Set([repo.defaultBranch, ...Object.keys(repo.protection), ...[...repo.pulls.values()].flatMap((p) => [p.head, p.base])]);
}

/** git's failures as GitHub would answer them: a missing commit is a 404, a diff too large a 406. */
async function gitCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    if (err.kind === "refused") throw notFound(`git could not read the repository: ${err.message}`);
    if (err.kind === "too-large") throw new GitHubError(406, "Sorry, the diff exceeded the maximum size it can be served at", { errors: [{ resource: "PullRequest", field: "diff", code: "too_large" }] });
    throw new GitHubError(500, err.message);
  }
}

/**
 * Puts the seed's check runs on the commit each pull request's head is at now, once, as
 * the simulator starts: from then on they belong to that commit, whatever the branch does.
 */
export async function anchorSeedChecks(repo: Repo): Promise<void> {
  const tips = await tipsOf(repo, repo.seedChecks.map((s) => s.pull));
  for (const { pull, runs } of repo.seedChecks.splice(0)) repo.checks.push(...runs.map((r) => ({ ...r, headSha: tips.get(pull)!.head })));
}
