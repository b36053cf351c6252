import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { MergeWork } from "../../../src/api/cycles.js";
import { CODES } from "../../../src/api/errors.js";

const run = promisify(execFile);

/** Who the runtime's merge commits are by, when the checkout names nobody. */
const IDENTITY = ["-c", "user.name=agent-runtime", "-c", "user.email=agent-runtime@localhost"];

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", ["-C", cwd, ...IDENTITY, ...args], { timeout: 60_000, maxBuffer: 16 << 20 });
  return stdout.trim();
}

export type MergeAnswer = { status: 200; body: { head: string; commit: string | null; alreadyMerged: boolean } } | { status: 409; body: { error: string; code: string; files?: string[] } };

/**
 * Merges the head of the child's working directory (its branch, in its worktree or clone)
 * into the parent's checkout: fetched by path, then a merge commit. A head the checkout
 * already contains is `alreadyMerged` and changes nothing. A merge that conflicts is
 * aborted, leaving the checkout as it was, and answered with the files in conflict.
 */
export async function mergeWork(work: MergeWork): Promise<MergeAnswer> {
  for (const dir of [work.into, work.from]) {
    const inside = await git(dir, "rev-parse", "--is-inside-work-tree").catch(() => "");
    if (inside !== "true") return { status: 409, body: { error: `${dir} is not a git checkout`, code: CODES.noCheckout } };
  }
  const head = await git(work.from, "rev-parse", "HEAD");
  const contained = await git(work.into, "merge-base", "--is-ancestor", head, "HEAD").then(
    () => true,
    () => false,
  );
  if (contained) return { status: 200, body: { head, commit: null, alreadyMerged: true } };
  await git(work.into, "fetch", "--no-tags", "--quiet", work.from, head).catch(async () => {
    // A worktree of the same repository has the commit already; a path fetch of a bare sha may be refused.
    await git(work.into, "cat-file", "-e", `${head}^{commit}`);
  });
  try {
    await git(work.into, "merge", "--no-ff", "--no-edit", "-m", work.message, head);
  } catch (err) {
    const files = (await git(work.into, "diff", "--name-only", "--diff-filter=U").catch(() => "")).split("\n").filter(Boolean);
    await git(work.into, "merge", "--abort").catch(() => {});
    return { status: 409, body: { error: `the merge of ${head.slice(0, 12)} conflicts${files.length ? ` in ${files.join(", ")}` : ""}: ${(err as Error).message.split("\n")[0]}`, code: CODES.mergeConflict, files } };
  }
  return { status: 200, body: { head, commit: await git(work.into, "rev-parse", "HEAD"), alreadyMerged: false } };
}
