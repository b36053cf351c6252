import type { HunkRange } from "../api/code-host.js";

/** One hunk of a unified diff: its ranges, and the base lines it changes and the lines it adds. */
export interface Hunk extends HunkRange {
  /**
   * The base lines the hunk changes: a removed line's number, and for an insertion the
   * number of the base line it goes before (or of the line it replaces), so a pure
   * addition still has a place.
   */
  touched: number[];
  /** The base lines it removes. */
  removed: number[];
  added: string[];
  /** Where each added line goes, as `touched` counts it: the base line it replaces or goes before. */
  addedAt: number[];
  /** The base lines it shows, kept and removed: the code the change is made in. */
  base: string[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** The hunks of one file's patch (GitHub's `patch`: the file's diff from its first `@@`). */
export function hunksOf(patch: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | null = null;
  let old = 0;
  let replacing = false;
  for (const line of patch.split("\n")) {
    const head = HEADER.exec(line);
    if (head) {
      hunk = {
        oldStart: Number(head[1]),
        oldLines: head[2] === undefined ? 1 : Number(head[2]),
        newStart: Number(head[3]),
        newLines: head[4] === undefined ? 1 : Number(head[4]),
        touched: [],
        removed: [],
        added: [],
        addedAt: [],
        base: [],
      };
      // A hunk of zero base lines starts after its oldStart; the next base line is oldStart + 1.
      old = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
      replacing = false;
      hunks.push(hunk);
    } else if (!hunk) continue;
    else if (line.startsWith("-")) {
      hunk.removed.push(old);
      hunk.touched.push(old++);
      hunk.base.push(line.slice(1));
      replacing = true;
    } else if (line.startsWith("+")) {
      // Lines added in place of removed ones sit where those were, not on the next base line.
      const at = replacing ? old - 1 : old;
      hunk.touched.push(at);
      hunk.added.push(line.slice(1));
      hunk.addedAt.push(at);
    } else if (line.startsWith(" ") || line === "") {
      old++;
      hunk.base.push(line.slice(1));
      replacing = false;
    }
  }
  for (const h of hunks) h.touched = [...new Set(h.touched)];
  return hunks;
}

/** A hunk's ranges without its lines, for an answer. */
export const rangeOf = ({ oldStart, oldLines, newStart, newLines }: HunkRange): HunkRange => ({ oldStart, oldLines, newStart, newLines });
