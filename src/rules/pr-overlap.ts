import type { OverlapEvidence, OverlapRelation } from "../api/code-host.js";
import { hunksOf, type Hunk } from "./diff-hunks.js";

/** What the overlap pass knows of one open pull request. */
export interface OverlapPull {
  number: number;
  title: string;
  body: string;
  createdAt: string;
  files: { path: string; previousPath: string | null; patch: string | null }[];
}

export interface PairVerdict {
  older: number;
  newer: number;
  relation: OverlapRelation;
  score: number;
  evidence: OverlapEvidence;
}

/**
 * Files nearly every change touches say nothing about two changes doing the same work:
 * manifests, lockfiles, changelogs. A file a quarter or more of the open pull requests
 * touch (at least four of them) counts as one too, whatever its name.
 */
const UBIQUITOUS = /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|go\.sum|go\.mod|poetry\.lock|Pipfile\.lock|Gemfile\.lock|composer\.lock|CHANGELOG(\.[a-z]+)?|CHANGES(\.[a-z]+)?|HISTORY(\.[a-z]+)?)$/i;

/** Two changes this many base lines apart touch the same code. */
const NEAR_LINES = 2;

/** Words that say what kind of change a title is, not what it is about. */
const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can do does for from has have how i if in into is it its me more no not of on or our out so some such than that the their then there these this those to up us was we were what when which while who will with without you your " +
    "add adds added adding fix fixes fixed fixing update updates updated updating change changes changed refactor refactors refactored refactoring improve improves improved use uses make makes new now also should would could just only please pr pull request patch wip draft minor small some"
  ).split(" "),
);

function stem(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("es")) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The words of prose, camelCase and snake_case split, stop words out, lightly stemmed. */
function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w) && !/^\d+$/.test(w))
    .map(stem);
}

/** The identifiers and words of code lines, for comparing what two changes add. */
function tokensOf(lines: string[]): string[] {
  return lines.flatMap((l) => l.toLowerCase().match(/[a-z_$][a-z0-9_$]{2,}/g) ?? []);
}

function counts(words: string[], weight = 1, into = new Map<string, number>()): Map<string, number> {
  for (const w of words) into.set(w, (into.get(w) ?? 0) + weight);
  return into;
}

function cosine(a: Map<string, number>, b: Map<string, number>, idf: (w: string) => number): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [w, x] of a) {
    const wx = x * idf(w);
    na += wx * wx;
    const y = b.get(w);
    if (y !== undefined) dot += wx * y * idf(w);
  }
  for (const [w, y] of b) nb += (y * idf(w)) ** 2;
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

interface Prepared {
  pull: OverlapPull;
  /** Each changed file by its name in the base (a rename's old name), so a rename and an edit of one file meet. */
  files: Map<string, Hunk[]>;
  text: Map<string, number>;
  added: Map<string, number>;
}

const near = (a: number[], b: number[]): boolean => a.some((x) => b.some((y) => Math.abs(x - y) <= NEAR_LINES));

/** How much of `a`'s changed base lines `b` changes too (within NEAR_LINES), over the given files. */
function covered(a: Prepared, b: Prepared, paths: string[]): { hit: number; of: number } {
  let hit = 0;
  let of = 0;
  for (const p of paths) {
    const mine = (a.files.get(p) ?? []).flatMap((h) => h.touched);
    const theirs = (b.files.get(p) ?? []).flatMap((h) => h.touched);
    of += mine.length;
    hit += mine.filter((x) => theirs.some((y) => Math.abs(x - y) <= NEAR_LINES)).length;
  }
  return { hit, of };
}

/**
 * The overlap pass's judgement of every pair of open pull requests (docs/code-host.md,
 * "The overlap pass"): `duplicate` when both change the same base lines and either add
 * much the same code or say much the same, or when they share files and say nearly the
 * same thing; `complementary` when they share files or words without being one piece of
 * work twice; other pairs are left out. Words are weighed by how rare they are among the
 * open pull requests, so a repository's everyday vocabulary does not make two alike.
 */
export function overlapPairs(pulls: OverlapPull[]): PairVerdict[] {
  const touchedBy = new Map<string, number>();
  for (const p of pulls) for (const f of new Set(p.files.map((f) => f.previousPath ?? f.path))) touchedBy.set(f, (touchedBy.get(f) ?? 0) + 1);
  const crowded = (path: string) => UBIQUITOUS.test(path) || (pulls.length >= 8 && (touchedBy.get(path) ?? 0) >= Math.max(4, pulls.length / 4));

  const prepared: Prepared[] = pulls.map((pull) => {
    const files = new Map<string, Hunk[]>();
    const addedLines: string[] = [];
    for (const f of pull.files) {
      const base = f.previousPath ?? f.path;
      if (crowded(base)) continue;
      const hunks = f.patch ? hunksOf(f.patch) : [];
      files.set(base, hunks);
      addedLines.push(...hunks.flatMap((h) => h.added));
    }
    const text = counts(wordsOf(pull.title), 2, counts(wordsOf(pull.body)));
    return { pull, files, text, added: counts(tokensOf(addedLines)) };
  });

  const df = new Map<string, number>();
  for (const p of prepared) for (const w of p.text.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const n = prepared.length;
  const idf = (w: string) => Math.log((n + 1) / ((df.get(w) ?? 0) + 1)) + 1;
  const flat = () => 1;

  const verdicts: PairVerdict[] = [];
  for (let i = 0; i < prepared.length; i++)
    for (let j = i + 1; j < prepared.length; j++) {
      const [a, b] = [prepared[i]!, prepared[j]!].sort((x, y) => x.pull.createdAt.localeCompare(y.pull.createdAt) || x.pull.number - y.pull.number) as [Prepared, Prepared];
      const shared = [...a.files.keys()].filter((p) => b.files.has(p));
      const ab = covered(a, b, shared);
      const ba = covered(b, a, shared);
      // Over the smaller change's lines: a small fix inside a larger rewrite of the same lines still overlaps.
      const allA = [...a.files.values()].flat().reduce((s, h) => s + h.touched.length, 0);
      const allB = [...b.files.values()].flat().reduce((s, h) => s + h.touched.length, 0);
      const lineOverlap = allA === 0 || allB === 0 ? 0 : allA <= allB ? ab.hit / allA : ba.hit / allB;
      const addedSimilarity = cosine(a.added, b.added, flat);
      const textSimilarity = cosine(a.text, b.text, idf);
      const overlappingHunks = shared.flatMap((path) =>
        (a.files.get(path) ?? []).flatMap((ha) =>
          (b.files.get(path) ?? [])
            .filter((hb) => near(ha.touched, hb.touched))
            .map((hb) => ({ path, older: `${ha.oldStart}-${ha.oldStart + Math.max(ha.oldLines, 1) - 1}`, newer: `${hb.oldStart}-${hb.oldStart + Math.max(hb.oldLines, 1) - 1}` })),
        ),
      );
      const duplicate =
        (lineOverlap >= 0.5 && (addedSimilarity >= 0.3 || textSimilarity >= 0.3)) ||
        (shared.length > 0 && textSimilarity >= 0.45 && addedSimilarity >= 0.3) ||
        (shared.length > 0 && textSimilarity >= 0.7);
      const related = duplicate || shared.length > 0 || textSimilarity >= 0.35;
      if (!related) continue;
      const round = (x: number) => Math.round(x * 1000) / 1000;
      verdicts.push({
        older: a.pull.number,
        newer: b.pull.number,
        relation: duplicate ? "duplicate" : "complementary",
        score: round(Math.min(1, 0.4 * lineOverlap + 0.3 * addedSimilarity + 0.3 * textSimilarity)),
        evidence: {
          sharedFiles: shared,
          overlappingHunks,
          lineOverlap: round(lineOverlap),
          addedSimilarity: round(addedSimilarity),
          textSimilarity: round(textSimilarity),
        },
      });
    }
  return verdicts.sort((x, y) => y.score - x.score || x.older - y.older || x.newer - y.newer);
}
