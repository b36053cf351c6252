/**
 * Unified diffs as text: what a pull request changes, per file and whole, whether it came
 * from `git diff` or was written into the seed.
 */
import type { SeedPull } from "./seed.js";

export type FileStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed";

export interface DiffFile {
  filename: string;
  previousFilename?: string;
  status: FileStatus;
  /** The blob GitHub names the file by (the new one; the old one for a removed file). */
  sha: string;
  additions: number;
  deletions: number;
  /** The file's hunks, from the first `@@`; absent for a binary file or a pure rename, as on GitHub. */
  patch?: string;
}

/** What a pull request changes: the whole diff as `.diff` serves it, and the files as `/files` lists them. */
export interface Comparison {
  diff: string;
  files: DiffFile[];
  commits: number;
}

export function countChanges(patch: string | undefined): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  // A hunk-only patch has no `+++`/`---` file headers, so every `+` and `-` line is a change.
  for (const line of patch?.split("\n") ?? []) {
    if (line.startsWith("+")) additions++;
    else if (line.startsWith("-")) deletions++;
  }
  return { additions, deletions };
}

/** `git diff` output cut at each `diff --git` line, one part per file, in order. */
export function splitPerFile(diff: string): string[] {
  const starts = [...diff.matchAll(/^diff --git /gm)].map((m) => m.index);
  return starts.map((start, i) => diff.slice(start, starts[i + 1] ?? diff.length));
}

/** GitHub's `patch` field: the file's part of the diff from its first hunk, without the final newline. */
export function patchOf(part: string): string | undefined {
  const at = part.indexOf("\n@@");
  return at < 0 ? undefined : part.slice(at + 1).replace(/\n$/, "");
}

export type Side = "RIGHT" | "LEFT";

/**
 * Where a review comment may sit, as GitHub decides it: a line of the new file (RIGHT: an
 * added or context line) or of the old one (LEFT: a removed or context line) inside one of
 * the file's hunks. Null when the line is outside every hunk on that side. `hunk` numbers
 * the hunk (a multi-line comment stays inside one); `diffHunk` is GitHub's `diff_hunk`:
 * the hunk from its header down to the line.
 */
export function placeInPatch(patch: string | undefined, line: number, side: Side): { hunk: number; diffHunk: string } | null {
  const lines = patch?.split("\n") ?? [];
  let start = -1;
  let hunk = -1;
  let oldNext = 0;
  let newNext = 0;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (header) {
      start = i;
      hunk++;
      oldNext = Number(header[1]);
      newNext = Number(header[2]);
      continue;
    }
    if (start < 0) continue;
    const onOld = text.startsWith("-") || text.startsWith(" ");
    const onNew = text.startsWith("+") || text.startsWith(" ");
    if ((side === "LEFT" ? onOld && oldNext === line : onNew && newNext === line)) return { hunk, diffHunk: lines.slice(start, i + 1).join("\n") };
    if (onOld) oldNext++;
    if (onNew) newNext++;
  }
  return null;
}

/** A comment's `diff_hunk` in a pull request's diff; null when its line has left the diff (GitHub's outdated comment) or the diff is unknown. */
export function placeOf(comparison: Comparison | null, c: { path: string; line: number; side: Side }): string | null {
  return placeInPatch(comparison?.files.find((f) => f.filename === c.path)?.patch, c.line, c.side)?.diffHunk ?? null;
}

/** A seed's files as the diff `git diff` would print for them, so `.diff` reads the same either way. */
export function comparisonOfSeedFiles(files: SeedPull["files"], blobSha: (filename: string) => string): Comparison {
  const parts = files.map((f) => {
    const from = f.previousFilename ?? f.filename;
    const head = [`diff --git a/${from} b/${f.filename}`];
    if (f.status === "added") head.push("new file mode 100644", "--- /dev/null", `+++ b/${f.filename}`);
    else if (f.status === "removed") head.push("deleted file mode 100644", `--- a/${from}`, "+++ /dev/null");
    else {
      if (f.status === "renamed") head.push(`rename from ${from}`, `rename to ${f.filename}`);
      if (f.patch) head.push(`--- a/${from}`, `+++ b/${f.filename}`);
    }
    return `${head.join("\n")}\n${f.patch ? `${f.patch.replace(/\n$/, "")}\n` : ""}`;
  });
  return {
    diff: parts.join(""),
    files: files.map((f) => ({
      filename: f.filename,
      ...(f.previousFilename ? { previousFilename: f.previousFilename } : {}),
      status: f.status,
      sha: blobSha(f.filename),
      ...countChanges(f.patch),
      ...(f.patch ? { patch: f.patch.replace(/\n$/, "") } : {}),
    })),
    commits: 1,
  };
}
