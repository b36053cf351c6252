import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The environment without the caller's GIT_* variables, which could point git at another repository. */
export const cleanGitEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));

/** git in `cwd`, committing as a test's author: its output, trimmed. */
export const gitAt =
  (cwd: string) =>
  (...args: string[]): string =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, env: cleanGitEnv(), stdio: "pipe" }).toString().trim();

/** Writes `files` (path: text) under `dir`, making the folders they need. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/**
 * A repository at `dir` for a pull request's tests: `main` with `files`, then each branch
 * off `main` (or off `from`) with its files written over, one commit each, and `main`
 * checked out at the end. Answers git there.
 */
export function gitRepo(dir: string, files: Record<string, string>, branches: { name: string; from?: string; files: Record<string, string> }[] = []): (...args: string[]) => string {
  mkdirSync(dir, { recursive: true });
  const git = gitAt(dir);
  git("init", "-q", "-b", "main");
  writeFiles(dir, files);
  git("add", "-A");
  git("commit", "-qm", "first");
  for (const b of branches) {
    git("checkout", "-q", "-b", b.name, b.from ?? "main");
    writeFiles(dir, b.files);
    git("add", "-A");
    git("commit", "-qm", b.name);
  }
  git("checkout", "-q", "main");
  return git;
}
