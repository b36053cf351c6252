import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MergeWork } from "../../../src/api/cycles.js";
import { MERGE_IDENTITY, type GitRunner } from "../git/merge.js";
import type { Sandbox, SessionPlaces } from "../sandbox/fence.js";

/** git with none of the front's environment (its secrets among it), nor the user's or the system's configuration. */
const GIT_ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" };

/**
 * The git directories a checkout whose `.git` is a file (a `git worktree`) reads besides
 * itself: the one the file names and the repository's common one. Read from the files, not
 * by asking git, which would run in the front.
 */
function gitDirsOf(dir: string): string[] {
  const dotGit = join(dir, ".git");
  try {
    if (!statSync(dotGit).isFile()) return [];
    const named = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
    if (!named) return [];
    const gitDir = resolve(dir, named);
    const common = existsSync(join(gitDir, "commondir")) ? resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim()) : gitDir;
    return [...new Set([gitDir, common])];
  } catch {
    return [];
  }
}

/** Where a merge's git runs: as the session of the checkout it merges into, with the child's checkout readable. */
export function mergePlaces(work: MergeWork): SessionPlaces {
  return { cwd: work.into, own: [], reads: [work.from, ...gitDirsOf(work.from), ...gitDirsOf(work.into)], ...(work.worktree ? { worktree: work.worktree } : {}) };
}

/**
 * git for a merge (bindings/git/merge.ts), fenced as the parent's session is: the checkout
 * merged into is the session's to change, hooks, config and attributes included, so what
 * git runs of it (a hook, a merge driver, an fsmonitor) runs where the session's own
 * commands run, never in the front.
 */
export function fencedGit(sandbox: Sandbox, work: MergeWork): GitRunner {
  const places = mergePlaces(work);
  return (cwd, args) =>
    new Promise((done, fail) => {
      let command: { file: string; args: string[] };
      try {
        command = sandbox.command(["git", "-C", cwd, ...MERGE_IDENTITY, ...args], places);
      } catch (err) {
        return fail(err);
      }
      execFile(command.file, command.args, { cwd: work.into, env: GIT_ENV, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        err ? fail(Object.assign(err, { stderr })) : done(stdout.trim()),
      );
    });
}
