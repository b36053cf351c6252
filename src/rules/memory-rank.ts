/**
 * How recall ranks memories (docs/memory.md, "How recall ranks"). Relevance is the
 * full-text index's BM25 over a memory's text, key and tags (FIELD_WEIGHTS), term by term:
 * the query's own words, and their related words (RELATED) at RELATED_WEIGHT. A memory
 * that matches part of a question may be helped by another that matches the rest and is
 * about the same thing (`aboutNames`): "which port does the payments frontend listen on"
 * matches the port facts by "port" and the fact "checkout-web is the payments frontend"
 * by the rest, and the port fact filed under checkout-web takes, for each term, the better
 * of its own match and LINKED_WEIGHT times its helper's. Two boosts multiply relevance,
 * both fixed by the data, never by the clock, so the same memories and the same query
 * give the same answer:
 *
 *   relevance = Σ over terms max(match, LINKED_WEIGHT × helper's match)
 *   score = relevance × (1 + IMPORTANCE_WEIGHT × importance) × (1 + RECENCY_WEIGHT × n / newest)
 *
 * where `n / newest` is how late the memory was stored among the workspace's (1 for the
 * newest). A retired memory, shown only when asked for, counts half, so a correction
 * ranks above the fact it corrected. Ties go to the newer memory.
 */
export const IMPORTANCE_WEIGHT = 0.5;
export const RECENCY_WEIGHT = 0.25;
export const RETIRED_FACTOR = 0.5;
/** BM25's weight of a match in each column of the index: text, key, tags. A key or a tag names what a memory is about. */
export const FIELD_WEIGHTS = { text: 1, key: 2, tags: 1 } as const;
/** A related word counts for less than the word asked. */
export const RELATED_WEIGHT = 0.5;
/** A helper's match counts for less than the memory's own, so the memory that matches the question itself stays first. */
export const LINKED_WEIGHT = 0.7;
/** How many memories, for each term, may help others. */
export const HELPERS_PER_TERM = 3;
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

/**
 * Words a team uses for the same thing, kept small and general: a query's word brings in
 * the others of its group. The index stems both sides, so one form of a word stands for
 * its inflections ("deploy" for "deployed", "deploys").
 */
const RELATED: readonly (readonly string[])[] = [
  ["port", "listen", "serve"],
  ["deploy", "release", "ship", "rollout", "roll out"],
  ["prod", "production"],
  ["owner", "own", "maintain", "maintainer", "responsible"],
  ["oncall", "pager", "pagerduty", "rotation", "handover", "handoff"],
  ["dashboard", "board", "graph", "metric", "grafana", "monitor"],
  ["database", "db"],
  ["store", "persist"],
  ["flaky", "flake", "intermittent", "intermittently", "randomly", "unreliable"],
  ["secret", "credential", "token", "password", "vault"],
  ["cron", "schedule", "scheduled", "nightly"],
  ["pin", "pinned", "bump", "upgrade"],
  ["flag", "toggle"],
  ["env", "environment", "variable"],
  ["config", "configuration", "setting", "configured"],
  ["command", "script"],
  ["local", "locally", "laptop", "localhost"],
  ["timeout", "time out"],
];

/** A word's form for looking it up among related words: the common English endings off. */
function base(word: string): string {
  return word.replace(/(?:ing|ed|es|s|e)$/, "").replace(/([b-df-hj-np-tv-z])\1$/, "$1");
}

const RELATED_BY_BASE = new Map<string, readonly string[]>();
for (const group of RELATED) for (const w of group) RELATED_BY_BASE.set(base(w), group);

/** The words related to the query's, but none of its own: asked apart, and weighed less. */
export function relatedTerms(words: readonly string[]): string[] {
  const asked = new Set(words.map(base));
  const out = new Set<string>();
  for (const w of words) for (const r of RELATED_BY_BASE.get(base(w)) ?? []) if (!asked.has(base(r))) out.add(r);
  return [...out].slice(0, 32);
}

/** A name written as words joined by `-` or `_` (checkout-web, TENANT_ADMIN_DATABASE_URL), as the index splits it. */
const IDENTIFIER = /[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)+/gu;

type Named = { key: string | null; tags: readonly string[]; text: string };

const tokens = (s: string) => s.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * What a memory is about, as phrases (each a list of words that stand together): the
 * joined names of its key, tags and text ("checkout-web" in the key `port:checkout-web`,
 * the tag `svc:checkout-web`, or its text), and the single words of its key and tags that
 * it repeats in another field ("ledger" as the key `owner:ledger` and in its text). A word
 * in one field only says what kind of memory it is ("port", "ops"), not what it is about.
 */
export function aboutNames(memory: Named): string[][] {
  const fields = [memory.key ?? "", memory.tags.join(" / "), memory.text].map((f) => ` ${tokens(f).join(" ")} `);
  const names = [...(memory.key ?? "").split(/[:/\s]+/), ...memory.tags.flatMap((t) => t.split(/[:/\s]+/)), ...(memory.text.normalize("NFKC").match(IDENTIFIER) ?? [])];
  const out = new Map<string, string[]>();
  for (const name of names) {
    const phrase = tokens(name).filter((w) => !STOPWORDS.has(w));
    const spelled = ` ${phrase.join(" ")} `;
    if (phrase.length === 0 || (phrase.length === 1 && fields.filter((f) => f.includes(spelled)).length < 2)) continue;
    out.set(spelled, phrase);
  }
  return [...out.values()];
}

/**
 * The memories that may help others: for each term of the query, the few that match it
 * best. A helper is there for the part of a question the others do not match, so it is
 * picked term by term, not by its whole match, which the words of the rest would win.
 */
export function helperPool<C extends { n: number; matches: readonly number[] }>(candidates: readonly C[], perTerm = HELPERS_PER_TERM): C[] {
  const out = new Map<number, C>();
  const terms = Math.max(0, ...candidates.map((c) => c.matches.length));
  for (let i = 0; i < terms; i++)
    for (const c of candidates
      .filter((c) => (c.matches[i] ?? 0) > 0)
      .sort((a, b) => b.matches[i]! - a.matches[i]! || b.n - a.n)
      .slice(0, perTerm))
      out.set(c.n, c);
  return [...out.values()];
}

/** The names the helpers are about, as phrases to ask the index for: what finds the memories only a helper matches. */
export function linkedTerms(pool: readonly Named[]): string[][] {
  const out = new Map<string, string[]>();
  for (const p of pool.flatMap(aboutNames)) out.set(p.join(" "), p);
  return [...out.values()].slice(0, 32);
}

type Matched = { n: number; matches: readonly number[]; names: readonly string[] };

/**
 * For each candidate, the matches of its best helper: another memory of the `pool`
 * (`helperPool`) about a name it is about too (`aboutNames`, joined), chosen for what the
 * two match together. None for a candidate that no helper adds to.
 */
export function helpers(pool: readonly Matched[], candidates: readonly Matched[]): Map<number, readonly number[]> {
  const out = new Map<number, readonly number[]>();
  for (const c of candidates) {
    let top = relevanceOf(c.matches);
    for (const h of pool) {
      if (h.n === c.n || !h.names.some((name) => c.names.includes(name))) continue;
      const together = relevanceOf(c.matches, h.matches);
      if (together > top) (top = together), out.set(c.n, h.matches);
    }
  }
  return out;
}

/** A memory's relevance: its match of each term, or LINKED_WEIGHT times its helper's where that is more. */
export function relevanceOf(matches: readonly number[], helper: readonly number[] = []): number {
  let sum = 0;
  for (let i = 0; i < Math.max(matches.length, helper.length); i++) sum += Math.max(matches[i] ?? 0, LINKED_WEIGHT * (helper[i] ?? 0));
  return sum;
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
  /** BM25 of each term of the query (higher is better; a related word's weighed already), 0 where it does not match. */
  matches: readonly number[];
  /** The matches of the memory that helps it (`helpers`), if any. */
  helper?: readonly number[];
  importance: number;
  retired: boolean;
  tokens: number;
}

/**
 * The candidates by score, best first, taken while they fit the budget (one that does not
 * is passed over for a smaller one). A candidate that matches no term, itself or through
 * its helper, is none of the answer: the index found it only as a name a helper is about.
 */
export function rankRecall(candidates: readonly Candidate[], newest: number, budgetTokens: number): (Candidate & { score: number })[] {
  return fillBudget(scoreRecall(candidates, newest), budgetTokens, (c) => c.tokens);
}

/** The candidates that match something, scored, best first: what `rankRecall` fills the budget from. */
export function scoreRecall<C extends Omit<Candidate, "tokens">>(candidates: readonly C[], newest: number): (C & { score: number })[] {
  const scored = candidates.flatMap((c) => {
    const relevance = relevanceOf(c.matches, c.helper);
    // Not rounded: BM25 gives a word in most memories a weight near 1e-6, and rounding would make every such score 0.
    const score = relevance * (1 + IMPORTANCE_WEIGHT * c.importance) * (1 + (RECENCY_WEIGHT * c.n) / Math.max(newest, 1)) * (c.retired ? RETIRED_FACTOR : 1);
    return relevance > 0 ? [{ ...c, score }] : [];
  });
  return scored.sort((a, b) => b.score - a.score || b.n - a.n);
}

/**
 * Scored candidates, best first, taken while they fit the budget, at most RECALL_MAX.
 * `tokensOf` is asked only for the candidates looked at, in order: the last looked at is
 * the last that could fit (a memory costs at least `recallTokens("x")`).
 */
export function fillBudget<C extends object>(scored: readonly C[], budgetTokens: number, tokensOf: (c: C, i: number) => number): (C & { tokens: number })[] {
  const out: (C & { tokens: number })[] = [];
  const least = recallTokens("x");
  let left = budgetTokens;
  for (const [i, c] of scored.entries()) {
    if (out.length === RECALL_MAX || left < least) break;
    const tokens = tokensOf(c, i);
    if (tokens > left) continue;
    out.push({ ...c, tokens });
    left -= tokens;
  }
  return out;
}
