import { hunksOf } from "./diff-hunks.js";

export type AnchorRefusal = "path-not-in-diff" | "line-outside-diff" | "no-patch";

/**
 * Whether the code host would place a review comment at this line, as GitHub decides it:
 * a RIGHT line is one of a hunk's new range (added or context), a LEFT line one of its old
 * range (removed or context). Every line inside a hunk's range is one of those, so the
 * ranges of the hunk headers decide. A file the host gives no patch for (binary, too
 * large) anchors nothing: GitHub refuses every line of it. A finding that does not anchor
 * goes in the review's body instead of failing the whole review.
 */
export function anchorable(
  files: { path: string; patch: string | null }[],
  f: { path: string; line: number; side: "RIGHT" | "LEFT" },
): { ok: true } | { ok: false; reason: AnchorRefusal } {
  const file = files.find((x) => x.path === f.path);
  if (!file) return { ok: false, reason: "path-not-in-diff" };
  if (file.patch === null) return { ok: false, reason: "no-patch" };
  for (const h of hunksOf(file.patch)) {
    const [start, count] = f.side === "RIGHT" ? [h.newStart, h.newLines] : [h.oldStart, h.oldLines];
    if (f.line >= start && f.line < start + count) return { ok: true };
  }
  return { ok: false, reason: "line-outside-diff" };
}
