import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memorySet, type MemorySet } from "../../bench/memory-set.js";
import { call } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/**
 * Memory quality on the committed synthetic set (bench/memory-set.ts): every fact retained
 * with its key, then the corrections (same keys: they retire what they replace), then the
 * duplicates; then every question recalled with the default budget. Text ranking alone:
 * no importance given, every memory a fact.
 *
 *   recall@5            the answer's current memory among the first five       (at least 0.85)
 *   superseded returned retired memories in any recall, without includeRetired (0)
 *   duplicates stored   duplicate retains that stored a new memory             (0)
 */
const set = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/memory-set.json"), "utf8")) as MemorySet;

const front = useFront();
const M = "/workspaces/default/memory";
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

describe("memory quality on the synthetic set", () => {
  it("the committed set is the generator's output", () => {
    expect(set.facts.length).toBeGreaterThanOrEqual(300);
    expect(set.questions.length).toBeGreaterThanOrEqual(300);
    expect(set.corrections.length).toBeGreaterThanOrEqual(60);
    expect(set.duplicates.length).toBeGreaterThanOrEqual(40);
    expect(memorySet()).toEqual(set);
  });

  it("recalls the current fact for a paraphrased question, never a superseded one, and stores no duplicate", async () => {
    const base = front().url;
    const retain = async (body: Record<string, unknown>) => {
      const r = await call(base, "POST", `${M}/retain`, body);
      expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
      return r.body as { id: string; duplicate: boolean; retired: string[] };
    };

    /** Each key's current memory, and every memory a correction retired. */
    const current = new Map<string, string>();
    const superseded = new Set<string>();
    for (const [f, kept] of (await pool(set.facts, (f) => retain({ text: f.text, kind: "fact", key: f.key, tags: f.tags }))).map((k, i) => [set.facts[i]!, k] as const)) {
      expect(kept.duplicate, f.text).toBe(false);
      current.set(f.key, kept.id);
    }
    const corrected = await pool(set.corrections, (c) => retain({ text: c.text, kind: "fact", key: c.key }));
    set.corrections.forEach((c, i) => {
      const kept = corrected[i]!;
      expect(kept.duplicate, c.text).toBe(false);
      expect(kept.retired, c.text).toEqual([current.get(c.key)]);
      superseded.add(current.get(c.key)!);
      current.set(c.key, kept.id);
    });
    const currentIds = new Set(current.values());

    // A duplicate retain answers the memory already kept, and stores nothing.
    const again = await pool(set.duplicates, (text) => retain({ text }));
    const duplicatesStored = again.filter((k) => !k.duplicate || !currentIds.has(k.id)).length;

    // One active fact per key, and it is the key's current one (the workspace reflects on its
    // memory by itself every 50 retains, so reflections stand beside the facts).
    const active: { id: string; key: string | null }[] = [];
    let before: number | null = null;
    do {
      const page: { memories: { id: string; key: string | null }[]; nextBefore: number | null } = (await call(base, "GET", `${M}?kind=fact&limit=500${before ? `&before=${before}` : ""}`)).body;
      active.push(...page.memories);
      before = page.nextBefore;
    } while (before);
    expect(active.length).toBe(set.facts.length);
    expect(new Set(active.map((m) => m.key)).size).toBe(set.facts.length);
    expect(active.every((m) => m.key !== null && current.get(m.key) === m.id)).toBe(true);

    const recalled = await pool(set.questions, async (q) => {
      const r = await call(base, "POST", `${M}/recall`, { query: q.question });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.memories as { id: string; retired: unknown }[];
    });
    let hits = 0;
    let supersededReturned = 0;
    const missed: Record<string, number> = {};
    set.questions.forEach((q, i) => {
      const found = recalled[i]!;
      if (found.slice(0, 5).some((m) => m.id === current.get(q.answerKey))) hits++;
      else {
        const kind = q.answerKey.split(":")[0]!;
        missed[kind] = (missed[kind] ?? 0) + 1;
      }
      supersededReturned += found.filter((m) => m.retired !== null || superseded.has(m.id)).length;
    });
    const recallAt5 = hits / set.questions.length;

    console.log(
      `memory-quality: recall@5=${recallAt5.toFixed(3)} (${hits}/${set.questions.length}) supersededReturned=${supersededReturned} duplicatesStored=${duplicatesStored}` +
        ` (facts=${set.facts.length} corrections=${set.corrections.length} duplicates=${set.duplicates.length}; missed by kind ${JSON.stringify(missed)})`,
    );
    expect(supersededReturned).toBe(0);
    expect(duplicatesStored).toBe(0);
    expect(recallAt5).toBeGreaterThanOrEqual(0.85);
  });
});
