/**
 * The memory rows of `npm run bench`: recall's latency with 50,000 memories in a
 * workspace, against a browse page of the same workspace (the same hop to the same
 * object, without the full-text search), and the retain rate, against held message
 * appends to a thread at the same concurrency.
 */
import type { Front } from "../test/support/front.js";
import { percentile } from "./load.js";
import { mulberry32 } from "./memory-set.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 50_000);
const CONCURRENCY = 16;

/** 3,000 made-up words from syllables: a vocabulary as varied as a codebase's names. */
function vocabulary(rand: () => number): string[] {
  const syllables = ["ka", "lo", "mi", "ter", "ba", "sun", "ri", "do", "ven", "qua", "pex", "ro", "li", "gan", "tu", "fer", "zo", "nim", "shi", "dra"];
  const words = new Set<string>();
  while (words.size < 3000) words.add(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => syllables[Math.floor(rand() * syllables.length)]).join(""));
  return [...words];
}

function sentence(rand: () => number, words: string[], n: number): string {
  return Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(" ");
}

/** `n` calls of `call`, `CONCURRENCY` at a time; the wall time. */
async function pool(n: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await call(next++);
    }),
  );
  return performance.now() - t;
}

export async function memoryRows(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const rand = mulberry32(19);
  const words = vocabulary(rand);
  const ws = "default";
  const texts = Array.from({ length: MEMORIES }, () => sentence(rand, words, 12 + Math.floor(rand() * 10)));
  const retainMs = await pool(MEMORIES, async (i) => {
    const r = await front.client.retain(ws, { text: texts[i]!, tags: [`t${i % 20}`], importance: (i % 10) / 10 });
    if (r.duplicate) throw new Error("bench: a generated memory came back a duplicate");
  });
  const thread = (await front.client.spawn({ model: "sim-1" })).threadId;
  const appends = Math.min(MEMORIES, 10_000);
  const appendMs = await pool(appends, (i) => front.client.post(thread, { text: texts[i]!, hold: true }));
  row(
    `retain, ${CONCURRENCY} at a time, into a workspace growing to ${MEMORIES} memories`,
    `${fmt((MEMORIES / retainMs) * 1000, 0)} retains/s`,
    `held message appends to a thread, the same texts and concurrency: ${fmt((appends / appendMs) * 1000, 0)}/s`,
    fmt(((MEMORIES / retainMs) * 1000) / ((appends / appendMs) * 1000), 2),
    "",
  );
  // Interleaved, so both meet the same machine.
  const recalls: number[] = [];
  const pages: number[] = [];
  const queries = Array.from({ length: 500 }, () => sentence(rand, words, 3 + Math.floor(rand() * 4)));
  for (const [i, query] of queries.entries()) {
    const t = performance.now();
    await front.client.recall(ws, { query, ...(i % 5 === 0 ? { tags: [`t${i % 20}`] } : {}) });
    recalls.push(performance.now() - t);
    const p = performance.now();
    await front.client.memories(ws, { limit: 1 });
    pages.push(performance.now() - p);
  }
  row(
    `recall (default budget of 1,000 tokens) with ${MEMORIES} memories (${queries.length} queries of 3 to 6 words)`,
    `p50 ${fmt(percentile(recalls, 50), 1)} ms, p95 ${fmt(percentile(recalls, 95), 1)} ms`,
    `a browse page of one memory, same workspace: p95 ${fmt(percentile(pages, 95), 1)} ms`,
    fmt(percentile(recalls, 95) / percentile(pages, 95), 2),
    "p95 < 20 ms",
  );
}
