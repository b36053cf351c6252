/**
 * How recall ranks memories (docs/memory.md, "How recall ranks"). Text relevance is the
 * full-text index's BM25; two boosts multiply it, and both are fixed by the data, never by
 * the clock, so the same memories and the same query give the same answer:
 *
 *   score = relevance × (1 + IMPORTANCE_WEIGHT × importance) × (1 + RECENCY_WEIGHT × n / newest)
 *
 * where `n / newest` is how late the memory was stored among the workspace's (1 for the
 * newest). A retired memory, shown only when asked for, counts half, so a correction
 * ranks above the fact it corrected. Ties go to the newer memory.
 */
export const IMPORTANCE_WEIGHT = 0.5;
export const RECENCY_WEIGHT = 0.25;
export const RETIRED_FACTOR = 0.5;
/** At most this many memories in one recall, whatever the budget. */
export const RECALL_MAX = 50;

/** Words that match nearly every memory and so rank none: left out of the query. */
const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "me my of on or our should so than that the their them then there these they this to us was we were what " +
    "when where which who why will with would you your"
  ).split(" "),
);

/** The query's words, as the index's tokenizer splits them, without stopwords: at most 32, each once. */
export function memoryTerms(query: string): string[] {
  const words = query.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => !STOPWORDS.has(w)))].slice(0, 32);
}

/** Two texts that differ only in case, width or spacing are the same memory. */
export function normalizedText(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

/** What a memory costs of a recall's budget: its text at about four characters a token, and a few for its framing. */
export function recallTokens(text: string): number {
  return Math.ceil(text.length / 4) + 8;
}

/** Line breaks of every kind: a memory's text must not be able to start a line of the list it is shown in. */
const BREAKS = /\r\n|[\r\n\u2028\u2029]/g;

/**
 * Memories as a list for a model, one item each, continuation lines indented, angle
 * brackets escaped (so no memory closes the block it is shown in): `- [mem_id] (kind) text`.
 */
export function memoryList(memories: readonly { id: string; kind: string; text: string }[]): string {
  const shown = (t: string) => t.replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(BREAKS, "\n  ");
  return memories.map((m) => `- [${m.id}] (${m.kind}) ${shown(m.text)}`).join("\n");
}

export interface Candidate {
  n: number;
  relevance: number;
  importance: number;
  retired: boolean;
  tokens: number;
}

/** The candidates by score, best first, taken while they fit the budget (one that does not is passed over for a smaller one). */
export function rankRecall(candidates: Candidate[], newest: number, budgetTokens: number): (Candidate & { score: number })[] {
  const scored = candidates.map((c) => {
    // Not rounded: BM25 gives a word in most memories a weight near 1e-6, and rounding would make every such score 0.
    const score = c.relevance * (1 + IMPORTANCE_WEIGHT * c.importance) * (1 + (RECENCY_WEIGHT * c.n) / Math.max(newest, 1)) * (c.retired ? RETIRED_FACTOR : 1);
    return { ...c, score };
  });
  scored.sort((a, b) => b.score - a.score || b.n - a.n);
  const out: (Candidate & { score: number })[] = [];
  let left = budgetTokens;
  for (const c of scored) {
    if (out.length === RECALL_MAX) break;
    if (c.tokens > left) continue;
    out.push(c);
    left -= c.tokens;
  }
  return out;
}
