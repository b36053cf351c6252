import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

const run = promisify(execFile);

/** git in a checkout, reading only: no hooks run, no lock taken, no pager. */
async function git(cwd: string, args: string[]): Promise<string | null> {
  try {
    const { stdout } = await run("git", ["-c", "core.fsmonitor=false", "--no-optional-locks", ...args], { cwd, maxBuffer: 256 * 1024 * 1024, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_OPTIONAL_LOCKS: "0", HOME: "/nonexistent" } });
    return stdout;
  } catch {
    return null;
  }
}

/**
 * The head as `.git` holds it, read without starting a process (a search asks each time):
 * a plain checkout's `HEAD` and its ref, loose or packed. Null when it is anything else (a
 * worktree's `.git` file, a ref that names another ref): git answers then.
 */
async function headFromFiles(cwd: string): Promise<{ branch: string | null; head: string | null } | null> {
  try {
    const dir = join(cwd, ".git");
    const head = (await readFile(join(dir, "HEAD"), "utf8")).trim();
    if (/^[0-9a-f]{40}$/.test(head)) return { branch: null, head };
    const ref = /^ref: (refs\/heads\/(.+))$/.exec(head);
    if (!ref || ref[1]!.split("/").includes("..")) return null;
    const loose = await readFile(join(dir, ref[1]!), "utf8").catch(() => null);
    const packed = loose ?? (await readFile(join(dir, "packed-refs"), "utf8").catch(() => "")).split("\n").find((l) => l.endsWith(` ${ref[1]}`))?.split(" ")[0] ?? null;
    const sha = packed?.trim() ?? null;
    return sha && /^[0-9a-f]{40}$/.test(sha) ? { branch: ref[2]!, head: sha } : sha === null ? { branch: ref[2]!, head: null } : null;
  } catch {
    return null;
  }
}

/** The checkout's branch (null when detached) and head commit, or nulls when it is no git checkout. */
export async function headOf(cwd: string): Promise<{ branch: string | null; head: string | null }> {
  const fast = await headFromFiles(cwd);
  if (fast) return fast;
  const [branch, head] = await Promise.all([git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"]), git(cwd, ["rev-parse", "-q", "--verify", "HEAD"])]);
  return { branch: branch?.trim() || null, head: head?.trim() || null };
}

/**
 * The tracked files under `path` (taken literally: no pathspec magic), relative to the
 * root, sorted; null when it is no git checkout.
 */
export async function trackedFiles(cwd: string, path: string): Promise<string[] | null> {
  const out = await git(cwd, ["--literal-pathspecs", "ls-files", "-z", "--", path || "."]);
  return out === null ? null : out.split("\0").filter(Boolean).sort();
}

/** Whether the checkout tracks this file; null when it is no git checkout. */
export async function isTracked(cwd: string, path: string): Promise<boolean | null> {
  if (path === "") return false;
  const out = await git(cwd, ["--literal-pathspecs", "ls-files", "-z", "--", path]);
  return out === null ? null : out.split("\0").includes(path);
}
