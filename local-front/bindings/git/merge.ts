import type { Merged, MergeWork } from "../../../src/api/cycles.js";
import { CODES } from "../../../src/api/errors.js";
import { OneAtATime } from "../one-at-a-time.js";
import { ok, refuse, type Outcome, type Refusal } from "../../../src/api/outcome.js";

/**
 * Runs one git command (`args` after `git`) in `cwd` and answers its stdout, trimmed; a
 * failure rejects with git's stderr. The engine host runs it fenced as the checkout's
 * session (bindings/engines/merge-git.ts): the checkout is the session's to change, its
 * `.git` (hooks, config, attributes that name drivers) included, so git there runs only
 * where the session itself may.
 */
export type GitRunner = (cwd: string, args: string[]) => Promise<string>;

/** Who the runtime's merge commits are by, when the checkout names nobody. */
export const MERGE_IDENTITY = ["-c", "user.name=agent-runtime", "-c", "user.email=agent-runtime@localhost"];

const succeeds = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

/** git's own first line, without the command line execFile puts before it. */
function said(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(err)).split("\n").find((l) => l.trim() !== "" && !l.startsWith("Command failed")) ?? "git failed";
}

const refused = (code: string, error: string, files?: string[]): Refusal => refuse(409, error, code, files ? { files } : undefined);

/** One merge at a time into a checkout: two at once would meet git's lock, or one abort the other's merge. */
const merges = new OneAtATime();

/**
 * Merges the head of the child's working directory (its branch, in its worktree or clone)
 * into the parent's checkout: fetched by path, then a merge commit. A head the checkout
 * already contains is `alreadyMerged` and changes nothing. A merge that conflicts is
 * aborted, leaving the checkout as it was, and answered with the files in conflict; a
 * checkout in the middle of someone's merge is left alone.
 */
export function mergeWork(work: MergeWork, run: GitRunner): Promise<Outcome<Merged>> {
  return merges.run(work.into, () => merge(work, (cwd, ...args) => run(cwd, args)));
}

async function merge(work: MergeWork, git: (cwd: string, ...args: string[]) => Promise<string>): Promise<Outcome<Merged>> {
  for (const dir of [work.into, work.from]) {
    const inside = await git(dir, "rev-parse", "--is-inside-work-tree").catch(() => "");
    if (inside !== "true") return refused(CODES.noCheckout, `${dir} is not a git checkout`);
  }
  const head = await git(work.from, "rev-parse", "--verify", "HEAD").catch(() => null);
  if (!head) return refused(CODES.noCheckout, `${work.from} has no commit to merge`);
  if (!(await succeeds(git(work.into, "rev-parse", "--verify", "HEAD")))) return refused(CODES.noCheckout, `${work.into} has no commit to merge into`);
  if ((await succeeds(git(work.into, "rev-parse", "-q", "--verify", "MERGE_HEAD"))) || (await git(work.into, "diff", "--name-only", "--diff-filter=U").catch(() => "")) !== "")
    return refused(CODES.mergeFailed, `a merge is in progress in ${work.into}: finish or abort it first`);
  if (await succeeds(git(work.into, "merge-base", "--is-ancestor", head, "HEAD"))) return ok({ head, commit: null, alreadyMerged: true });
  // A worktree of the same repository has the commit already; a path fetch of a bare sha may be refused.
  const fetched = (await succeeds(git(work.into, "fetch", "--no-tags", "--quiet", work.from, head))) || (await succeeds(git(work.into, "cat-file", "-e", `${head}^{commit}`)));
  if (!fetched) return refused(CODES.mergeFailed, `${work.into} could not fetch ${head.slice(0, 12)} from ${work.from}`);
  try {
    await git(work.into, "merge", "--no-ff", "--no-edit", "-m", work.message, head);
  } catch (err) {
    const files = (await git(work.into, "diff", "--name-only", "--diff-filter=U").catch(() => "")).split("\n").filter(Boolean);
    // Only a merge git started and could not finish is aborted; one it refused to start left nothing behind.
    if (files.length === 0) return refused(CODES.mergeFailed, `git did not merge ${head.slice(0, 12)}: ${said(err)}`);
    await git(work.into, "merge", "--abort").catch(() => {});
    return refused(CODES.mergeConflict, `the merge of ${head.slice(0, 12)} conflicts in ${files.join(", ")}`, files);
  }
  return ok({ head, commit: await git(work.into, "rev-parse", "HEAD"), alreadyMerged: false });
}
