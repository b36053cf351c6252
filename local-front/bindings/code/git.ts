import { execFile } from "node:child_process";
import { promisify } from "node:util";

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

/** The checkout's branch (null when detached) and head commit, or nulls when it is no git checkout. */
export async function headOf(cwd: string): Promise<{ branch: string | null; head: string | null }> {
  const [branch, head] = await Promise.all([git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"]), git(cwd, ["rev-parse", "-q", "--verify", "HEAD"])]);
  return { branch: branch?.trim() || null, head: head?.trim() || null };
}

/** The tracked files under `path`, relative to the checkout's top, sorted; null when it is no git checkout. */
export async function trackedFiles(cwd: string, path: string): Promise<string[] | null> {
  const out = await git(cwd, ["ls-files", "-z", "--full-name", "--", path || "."]);
  return out === null ? null : out.split("\0").filter(Boolean).sort();
}
