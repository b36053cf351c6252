/**
 * Recall@5 of workspace memory on a set of facts and questions, by question kind: the
 * measure of test/e2e/memory-quality.test.ts, and a script to take it once on a set that
 * was never tuned on.
 *
 * THE SET. The format of test/fixtures/memory-set.json (bench/memory-set.ts): `facts`
 * ({key, text, tags}), `corrections` ({key, text}: a later fact for a fact's key, which
 * retires it), `duplicates` (texts retained again) and `questions` ({question, answerKey,
 * kind}: the answer is the current fact of `answerKey`; `kind` is free text, printed as it
 * comes). Every fact is retained with its key and tags, then every correction with its
 * key, then every duplicate; then each question is recalled with the default budget, and
 * it counts when the key's current memory is among the first five.
 *
 * HELD OUT. A set written by someone who never saw the generator's templates is measured
 * once, and the ranking is not tuned on it: a set looked at while changing the ranking is
 * no longer held out.
 *
 *   node --import tsx bench/memory-holdout.ts [path/to/set.json]
 *
 * starts the front (as `npm start` does, with a fresh data directory), prints the table,
 * and exits 0 whatever the numbers are.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { removeDir, startFront } from "../test/support/front.js";
import { call } from "../test/support/http.js";

export interface MeasuredSet {
  facts: { key: string; text: string; tags?: string[] }[];
  questions: { question: string; answerKey: string; kind?: string }[];
  corrections?: { key: string; text: string }[];
  duplicates?: string[];
}

type Kept = { status: number; body: { id?: string; duplicate?: boolean; retired?: string[] } & Record<string, unknown> };

export interface Measured {
  /** Each kind's questions and how many found their answer in the first five, kinds in order of first appearance. */
  kinds: { kind: string; hits: number; of: number }[];
  hits: number;
  of: number;
  /** Retired memories any recall returned (it asks for none). */
  supersededReturned: number;
  /** Duplicate retains that stored a new memory. */
  duplicatesStored: number;
  /** The answers to every fact's, correction's and duplicate's retain, in the set's order. */
  facts: Kept[];
  corrections: Kept[];
  duplicates: Kept[];
  /** Each key's current memory, and every memory a correction retired. */
  current: Map<string, string>;
  superseded: Set<string>;
  /** The questions missed: kind, question, the keys of what came first. */
  missed: { kind: string; question: string; answerKey: string; got: (string | null)[] }[];
}

const CONCURRENCY = 8;

/** `f` over `xs`, at most `CONCURRENCY` at a time, results in order. */
async function pool<T, R>(xs: readonly T[], f: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, xs.length) }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await f(xs[i]!, i);
      }
    }),
  );
  return out;
}

/**
 * A set's tags as the API takes them (lowercase letters, digits and `: _ . / -`, at most
 * 64 characters, 16 tags), as an agent retaining them would write them: a set written by
 * hand may say "Payments" or "on call".
 */
export function asTags(tags: readonly string[]): string[] {
  const out = tags.map((t) => t.normalize("NFKC").toLowerCase().trim().replace(/[^a-z0-9:_./-]+/g, "-").replace(/^[^a-z0-9]+/, "").slice(0, 64)).filter(Boolean);
  return [...new Set(out)].slice(0, 16);
}

/** Retains `set` in `workspace` of the front at `base` (whose memory should be empty), and recalls every question. */
export async function measureMemorySet(base: string, workspace: string, set: MeasuredSet): Promise<Measured> {
  const M = `/workspaces/${workspace}/memory`;
  const retain = async (body: Record<string, unknown>): Promise<Kept> => {
    const r = await call(base, "POST", `${M}/retain`, body);
    return { status: r.status, body: r.body };
  };
  const current = new Map<string, string>();
  const superseded = new Set<string>();
  // One at a time, as every retain below: the order memories are stored in is part of their rank (recency), and the same set should measure the same.
  const facts: Kept[] = [];
  for (const f of set.facts) facts.push(await retain({ text: f.text, kind: "fact", key: f.key, ...(f.tags?.length ? { tags: asTags(f.tags) } : {}) }));
  set.facts.forEach((f, i) => {
    const id = facts[i]!.body.id;
    if (id) current.set(f.key, id);
  });
  const corrections: Kept[] = [];
  for (const c of set.corrections ?? []) {
    const kept = await retain({ text: c.text, kind: "fact", key: c.key });
    corrections.push(kept);
    for (const id of kept.body.retired ?? []) superseded.add(id);
    if (kept.body.id) current.set(c.key, kept.body.id);
  }
  const currentIds = new Set(current.values());
  const duplicates: Kept[] = [];
  for (const text of set.duplicates ?? []) duplicates.push(await retain({ text }));
  const duplicatesStored = duplicates.filter((k) => !k.body.duplicate || !currentIds.has(k.body.id ?? "")).length;

  const recalled = await pool(set.questions, async (q) => {
    const r = await call(base, "POST", `${M}/recall`, { query: q.question });
    if (r.status !== 200) throw new Error(`recall answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.memories as { id: string; key: string | null; retired: unknown }[];
  });
  const kinds = new Map<string, { kind: string; hits: number; of: number }>();
  const missed: Measured["missed"] = [];
  let hits = 0;
  let supersededReturned = 0;
  set.questions.forEach((q, i) => {
    const found = recalled[i]!;
    const kind = q.kind ?? "(no kind)";
    const k = kinds.get(kind) ?? { kind, hits: 0, of: 0 };
    kinds.set(kind, k);
    k.of++;
    const answer = current.get(q.answerKey);
    if (answer !== undefined && found.slice(0, 5).some((m) => m.id === answer)) (k.hits++, hits++);
    else missed.push({ kind, question: q.question, answerKey: q.answerKey, got: found.slice(0, 5).map((m) => m.key) });
    supersededReturned += found.filter((m) => m.retired !== null || superseded.has(m.id)).length;
  });
  return { kinds: [...kinds.values()], hits, of: set.questions.length, supersededReturned, duplicatesStored, facts, corrections, duplicates, current, superseded, missed };
}

/** The measure as a table, one kind a line, each with its floor when `floors` names one. */
export function kindTable(title: string, m: Measured, floors: Record<string, number> = {}): string {
  const rows = [...m.kinds].sort((a, b) => a.kind.localeCompare(b.kind)).map((k) => [k.kind, String(k.of), (k.hits / k.of).toFixed(3), floors[k.kind] === undefined ? "" : floors[k.kind]!.toFixed(2)]);
  rows.push(["all", String(m.of), (m.of ? m.hits / m.of : 0).toFixed(3), floors.all === undefined ? "" : floors.all.toFixed(2)]);
  const head = ["kind", "questions", "recall@5", "floor"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [title, line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

async function main(): Promise<void> {
  const path = process.argv[2] ?? "test/fixtures/memory-holdout.json";
  const set = JSON.parse(readFileSync(path, "utf8")) as MeasuredSet;
  const front = await startFront();
  try {
    const m = await measureMemorySet(front.url, "default", set);
    const refused = [...m.facts, ...m.corrections, ...m.duplicates].filter((k) => k.status >= 300);
    console.log(kindTable(`Memory recall@5 on ${path}: ${set.facts.length} facts, ${set.corrections?.length ?? 0} corrections, ${set.duplicates?.length ?? 0} duplicates`, m));
    console.log(`\nsuperseded returned ${m.supersededReturned}, duplicates stored ${m.duplicatesStored}, retains refused ${refused.length}`);
    for (const k of refused) console.log(`  refused ${k.status}: ${JSON.stringify(k.body)}`);
    if (m.missed.length) console.log(`\nmissed:\n${m.missed.map((x) => `  [${x.kind}] ${x.question} -> ${x.answerKey}; first: ${x.got.join(", ")}`).join("\n")}`);
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(0);
    },
  );
