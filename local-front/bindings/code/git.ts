import { execFile } from "node:child_process";
import { lstat, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/** A git call that failed for a reason other than "no checkout here" (a foreign owner, a missing binary, a timeout): the caller refuses, it never reads past it. */
export class GitFailed extends Error {}

const NOT_A_REPO = /not a git repository/i;

/**
 * git in a checkout, reading only: no hooks run, no lock taken, no pager, at most ten
 * seconds. Null when the directory is no git checkout; any other failure throws GitFailed.
 */
function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["-c", "core.fsmonitor=false", "--no-optional-locks", ...args],
      { cwd, maxBuffer: 256 * 1024 * 1024, timeout: 10_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_OPTIONAL_LOCKS: "0", HOME: "/nonexistent" } },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if (NOT_A_REPO.test(stderr)) return resolve(null);
        reject(new GitFailed(`git ${args.find((a) => !a.startsWith("-")) ?? ""} failed: ${stderr.trim().split("\n").at(-1) || err.message}`));
      },
    );
  });
}

/** A file of `.git`, only when it is a regular file (a FIFO planted there would block a read). */
async function regular(path: string): Promise<string | null> {
  const s = await lstat(path).catch(() => null);
  return s?.isFile() ? readFile(path, "utf8") : null;
}

/**
 * The head as `.git` holds it, read without starting a process (a search asks each time):
 * a plain checkout's `HEAD` and its ref, loose or packed. Null when it is anything else (a
 * worktree's `.git` file, a ref that names another ref, the reftable format): git answers then.
 */
async function headFromFiles(cwd: string): Promise<{ branch: string | null; head: string | null } | null> {
  try {
    const dir = join(cwd, ".git");
    if (await lstat(join(dir, "reftable")).catch(() => null)) return null;
    const head = (await regular(join(dir, "HEAD")))?.trim();
    if (head === undefined) return null;
    if (/^[0-9a-f]{40}$/.test(head)) return { branch: null, head };
    const ref = /^ref: (refs\/heads\/(.+))$/.exec(head);
    if (!ref || ref[1]!.split("/").includes("..")) return null;
    const loose = await regular(join(dir, ref[1]!));
    const packed = loose ?? ((await regular(join(dir, "packed-refs"))) ?? "").split("\n").find((l) => l.endsWith(` ${ref[1]}`))?.split(" ")[0] ?? null;
    const sha = packed?.trim() ?? null;
    return sha && /^[0-9a-f]{40}$/.test(sha) ? { branch: ref[2]!, head: sha } : sha === null ? { branch: ref[2]!, head: null } : null;
  } catch {
    return null;
  }
}

/** The checkout's branch (null when detached) and head commit, or nulls when it is no git checkout or git cannot say. */
export async function headOf(cwd: string): Promise<{ branch: string | null; head: string | null }> {
  const fast = await headFromFiles(cwd);
  if (fast) return fast;
  const ask = (args: string[]) => git(cwd, args).catch(() => null);
  const [branch, head] = await Promise.all([ask(["symbolic-ref", "--short", "-q", "HEAD"]), ask(["rev-parse", "-q", "--verify", "HEAD"])]);
  return { branch: branch?.trim() || null, head: head?.trim() || null };
}

/**
 * The tracked files under `path` (taken literally: no pathspec magic), relative to the
 * root, sorted; null when it is no git checkout. Throws GitFailed when git fails otherwise.
 */
export async function trackedFiles(cwd: string, path: string): Promise<string[] | null> {
  const out = await git(cwd, ["--literal-pathspecs", "ls-files", "-z", "--stage", "--", path || "."]);
  if (out === null) return null;
  // `<mode> <object> <stage>\t<path>`; a submodule (mode 160000) is another repository's, not a file of this one.
  const files = out.split("\0").flatMap((entry) => {
    const tab = entry.indexOf("\t");
    return tab === -1 || entry.startsWith("160000 ") ? [] : [entry.slice(tab + 1)];
  });
  return [...new Set(files)].sort();
}

/** Each root's tracked files, kept while its index is the same file (same size, time and inode): a read or a search need not ask git each time. */
const trackedCache = new Map<string, { stamp: string; files: string[]; set: Set<string> }>();

async function indexStamp(root: string): Promise<string | null> {
  const index = await stat(join(root, ".git", "index")).catch(() => null);
  return index?.isFile() ? `${index.size}:${index.mtimeMs}:${index.ino}` : null;
}

/** Every tracked file of the root (as `trackedFiles` lists them), from the cache while the index is unchanged. */
export async function trackedOf(root: string): Promise<string[] | null> {
  return (await kept(root))?.files ?? (await trackedFiles(root, ""));
}

async function kept(root: string): Promise<{ files: string[]; set: Set<string> } | null> {
  const stamp = await indexStamp(root);
  if (!stamp) return null;
  const held = trackedCache.get(root);
  if (held && held.stamp === stamp) return held;
  const files = await trackedFiles(root, "");
  if (!files) return null;
  const entry = { stamp, files, set: new Set(files) };
  trackedCache.set(root, entry);
  return entry;
}

/** Whether the checkout tracks this file; null when it is no git checkout. Throws GitFailed when git fails otherwise. */
export async function isTracked(cwd: string, path: string): Promise<boolean | null> {
  if (path === "") return false;
  const held = await kept(cwd);
  if (held) return held.set.has(path);
  const out = await git(cwd, ["--literal-pathspecs", "ls-files", "-z", "--", path]);
  return out === null ? null : out.split("\0").includes(path);
}
