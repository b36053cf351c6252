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
 * lockfiles and changelogs. A file a quarter or more of the open pull requests touch (at
 * least four of them) counts as one too, whatever its name.
 */
const UBIQUITOUS = /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|go\.sum|poetry\.lock|Pipfile\.lock|Gemfile\.lock|composer\.lock|uv\.lock|CHANGELOG(\.[a-z]+)?|CHANGES(\.[a-z]+)?|HISTORY(\.[a-z]+)?)$/i;

/**
 * Manifests and build files: short lists of unrelated entries, where changes next to each
 * other (two dependencies added in a row) are no sign of shared work. In them only a line
 * both change (the same base line removed by both) counts, and of what a pull request adds
 * there, only what replaces such a line.
 */
const MANIFEST = /(^|\/)(package\.json|requirements[^/]*\.(txt|in)|constraints[^/]*\.txt|pyproject\.toml|setup\.cfg|setup\.py|Pipfile|go\.mod|Cargo\.toml|Gemfile|pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|Makefile|composer\.json|\.gitignore|\.dockerignore)$/i;

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

interface Changed {
  hunks: Hunk[];
  manifest: boolean;
  /** The base lines that count (`counted`), sorted, for searching. */
  lines: number[];
}

interface Prepared {
  pull: OverlapPull;
  /** Each changed file by its name in the base (a rename's old name), so a rename and an edit of one file meet. */
  files: Map<string, Changed>;
  text: Map<string, number>;
  /** How many base lines it touches that count, in all its files. */
  size: number;
}

/** The base lines a change touches that count, sorted: in a manifest, only those it removes. */
const counted = (hunks: Hunk[], manifest: boolean): number[] => [...new Set(hunks.flatMap((h) => (manifest ? h.removed : h.touched)))].sort((x, y) => x - y);

/** Whether a change of a file at base line `x` meets another's (`ys`, sorted): in a manifest on the same line, elsewhere within NEAR_LINES. */
function meets(x: number, ys: number[], manifest: boolean): boolean {
  const reach = manifest ? 0 : NEAR_LINES;
  let lo = 0;
  let hi = ys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ys[mid]! < x - reach) lo = mid + 1;
    else hi = mid;
  }
  return lo < ys.length && ys[lo]! <= x + reach;
}

/** How many of `a`'s counted base lines in the given files `b` changes too. */
function covered(a: Prepared, b: Prepared, paths: string[]): number {
  let hit = 0;
  for (const p of paths) {
    const mine = a.files.get(p)!;
    const theirs = b.files.get(p)!.lines;
    for (const x of mine.lines) if (meets(x, theirs, mine.manifest)) hit++;
  }
  return hit;
}

/** What `a` adds to one file that counts against `b`: everything, but in a manifest only the lines that replace a line both remove. */
function addedTo(a: Prepared, b: Prepared, path: string): string[] {
  const mine = a.files.get(path)!;
  if (!mine.manifest) return mine.hunks.flatMap((h) => h.added);
  const theirs = new Set(b.files.get(path)!.lines);
  // A run of removed lines is replaced as a whole (git puts its added lines after all of them): it counts when any of its lines is one the other removes too.
  return mine.hunks.flatMap((h) => {
    const gone = new Set(h.removed);
    const runHits = (end: number) => {
      for (let line = end; gone.has(line); line--) if (theirs.has(line)) return true;
      return false;
    };
    return h.added.filter((_, i) => runHits(h.addedAt[i]!));
  });
}

/**
 * The identifiers of what a change adds to the given files, each weighed by how rare it is
 * among the open pull requests' additions, and less (0.3) when the code around the change
 * already has it: what two changes add that is new says what they are for.
 */
function addedIn(a: Prepared, b: Prepared, paths: string[], idf: (w: string) => number): Map<string, number> {
  const around = new Set(paths.flatMap((p) => tokensOf([...a.files.get(p)!.hunks, ...b.files.get(p)!.hunks].flatMap((h) => h.base))));
  const out = new Map<string, number>();
  for (const w of tokensOf(paths.flatMap((p) => addedTo(a, b, p)))) out.set(w, (out.get(w) ?? 0) + idf(w) * (around.has(w) ? 0.3 : 1));
  return out;
}

/**
 * The overlap pass's judgement of every pair of open pull requests (docs/code-host.md,
 * "The overlap pass"): `duplicate` when both change the same base lines and either add
 * much the same code or say much the same, or when they share files and say nearly the
 * same thing; `complementary` when they share files or words without being one piece of
 * work twice; other pairs are left out. Words are weighed by how rare they are among the
 * open pull requests, so a repository's everyday vocabulary does not make two alike.
 */
export function overlapPairs(listed: OverlapPull[]): PairVerdict[] {
  // One pull request listed twice is no pair.
  const pulls = [...new Map(listed.map((p) => [p.number, p])).values()];
  const touchedBy = new Map<string, number>();
  for (const p of pulls) for (const f of new Set(p.files.map((f) => f.previousPath ?? f.path))) touchedBy.set(f, (touchedBy.get(f) ?? 0) + 1);
  const crowded = (path: string) => UBIQUITOUS.test(path) || (pulls.length >= 8 && (touchedBy.get(path) ?? 0) >= Math.max(4, pulls.length / 4));

  const prepared: Prepared[] = pulls.map((pull) => {
    const files = new Map<string, Changed>();
    for (const f of pull.files) {
      const base = f.previousPath ?? f.path;
      if (crowded(base)) continue;
      const hunks = f.patch ? hunksOf(f.patch) : [];
      const manifest = MANIFEST.test(base);
      files.set(base, { hunks, manifest, lines: counted(hunks, manifest) });
    }
    return { pull, files, text: counts(wordsOf(pull.title), 2, counts(wordsOf(pull.body))), size: [...files.values()].reduce((n, c) => n + c.lines.length, 0) };
  });

  const rarity = (bags: Iterable<string>[]) => {
    const df = new Map<string, number>();
    for (const bag of bags) for (const w of new Set(bag)) df.set(w, (df.get(w) ?? 0) + 1);
    return (w: string) => Math.log((prepared.length + 1) / ((df.get(w) ?? 0) + 1)) + 1;
  };
  const wordRarity = rarity(prepared.map((p) => p.text.keys()));
  const codeRarity = rarity(prepared.map((p) => tokensOf([...p.files.values()].flatMap((c) => c.hunks.flatMap((h) => h.added)))));
  const flat = () => 1;
  const round = (x: number) => Math.round(x * 1000) / 1000;

  const verdicts: PairVerdict[] = [];
  for (let i = 0; i < prepared.length; i++)
    for (let j = i + 1; j < prepared.length; j++) {
      const [a, b] = [prepared[i]!, prepared[j]!].sort((x, y) => x.pull.createdAt.localeCompare(y.pull.createdAt) || x.pull.number - y.pull.number) as [Prepared, Prepared];
      const common = [...a.files.keys()].filter((p) => b.files.has(p));
      // A manifest both change is shared only where both change one of its lines.
      const shared = common.filter((p) => !a.files.get(p)!.manifest || covered(a, b, [p]) > 0);
      // Over the smaller change's lines: a small fix inside a larger rewrite of the same lines still overlaps.
      const allA = a.size;
      const allB = b.size;
      const lineOverlap = allA === 0 || allB === 0 ? 0 : allA <= allB ? covered(a, b, shared) / allA : covered(b, a, shared) / allB;
      const addedSimilarity = cosine(addedIn(a, b, shared, codeRarity), addedIn(b, a, shared, codeRarity), flat);
      const textSimilarity = cosine(a.text, b.text, wordRarity);
      const overlappingHunks = shared.flatMap((path) => {
        const { hunks: ours, manifest } = a.files.get(path)!;
        const theirs = b.files.get(path)!.hunks;
        const span = (h: Hunk) => `${h.oldStart}-${h.oldStart + Math.max(h.oldLines, 1) - 1}`;
        return ours.flatMap((ha) =>
          theirs
            .filter((hb) => {
              const theirs = counted([hb], manifest);
              return counted([ha], manifest).some((x) => meets(x, theirs, manifest));
            })
            .map((hb) => ({ path, older: span(ha), newer: span(hb) })),
        );
      });
      // A manifest line is a few words: two edits of it are one piece of work only if they put much the same there.
      const onlyManifests = shared.every((p) => a.files.get(p)!.manifest);
      const duplicate =
        (lineOverlap >= 0.5 && (addedSimilarity >= (onlyManifests ? 0.5 : 0.1) || textSimilarity >= 0.3)) ||
        (shared.length > 0 && textSimilarity >= 0.45 && addedSimilarity >= 0.1) ||
        (shared.length > 0 && textSimilarity >= 0.7);
      // One line of a manifest both edit, for different ends, is no shared work.
      const related = duplicate || shared.some((p) => !a.files.get(p)!.manifest) || textSimilarity >= 0.35;
      if (!related) continue;
      verdicts.push({
        older: a.pull.number,
        newer: b.pull.number,
        relation: duplicate ? "duplicate" : "complementary",
        score: round(Math.min(1, 0.4 * lineOverlap + 0.3 * addedSimilarity + 0.3 * textSimilarity)),
        evidence: { sharedFiles: shared, overlappingHunks, lineOverlap: round(lineOverlap), addedSimilarity: round(addedSimilarity), textSimilarity: round(textSimilarity) },
      });
    }
  return verdicts.sort((x, y) => y.score - x.score || x.older - y.older || x.newer - y.newer);
}
