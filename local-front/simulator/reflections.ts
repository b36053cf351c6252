/**
 * The simulator's reflections on workspace memory: deterministic and extractive. Memories
 * that share content words are grouped; each group becomes one reflection that names what
 * they share, quotes the start of each, and cites exactly their ids. Memories that share
 * nothing give an empty array, as the prompt asks.
 */

export interface Memory {
  id: string;
  kind: string;
  text: string;
}

export interface Reflection {
  text: string;
  cites: string[];
}

/** Words too common to say two memories are about the same thing. */
const STOP = new Set(
  (
    "the a an and or but of to in on at for from by with without into onto over under after before about as is are was were be been being " +
    "it its this that these those there their they them we our you your he she his her i me my not no yes do does did done have has had " +
    "will would can could should may might must shall than then so if when while which who what where why how all any each every some " +
    "more most less least very just also only again once one two three per via up down out off new old same other such own too"
  ).split(" "),
);
const MIN_WORD = 3;
/** Each memory quoted by its first words: enough to recognize it. */
const QUOTE_WORDS = 14;
/** The shared words a reflection names. */
const SHARED_SHOWN = 4;

/** A word's stem, so "migration" and "migrations", "deploy" and "deploys" meet. */
function stem(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("es") && !word.endsWith("ses")) return word.slice(0, -1).replace(/e$/, "");
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The content words of a text: each stem once, with the first spelling it had. */
function contentWords(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]*/gu) ?? []) {
    if (w.length < MIN_WORD || STOP.has(w) || /^\d+$/.test(w)) continue;
    const s = stem(w);
    if (!out.has(s)) out.set(s, w);
  }
  return out;
}

function quoteOf(text: string): string {
  const all = text.split(/\s+/).filter((w) => w !== "");
  return all.length <= QUOTE_WORDS ? all.join(" ") : `${all.slice(0, QUOTE_WORDS).join(" ")} …`;
}

/** At most `most` reflections on `memories` (oldest first), largest groups first. */
export function reflect(memories: Memory[], most: number): Reflection[] {
  const words = memories.map((m) => contentWords(m.text));
  // For each stem, the memories that hold it, in their order.
  const holders = new Map<string, number[]>();
  words.forEach((ws, i) => {
    for (const s of ws.keys()) holders.set(s, [...(holders.get(s) ?? []), i]);
  });
  const shared = [...holders.entries()].filter(([, at]) => at.length >= 2);
  // Stems held by exactly the same memories are one group; the group names them all.
  const groups = new Map<string, { at: number[]; stems: string[] }>();
  for (const [s, at] of shared) {
    const key = at.join(",");
    const g = groups.get(key) ?? { at, stems: [] };
    g.stems.push(s);
    groups.set(key, g);
  }
  // Groups sharing more words first, then larger ones, then older ones: ties break on content, never on chance.
  const ranked = [...groups.values()].sort((a, b) => b.stems.length - a.stems.length || b.at.length - a.at.length || a.at[0]! - b.at[0]!);
  // Each stem is in one group only, so every group names something the others do not.
  return ranked.slice(0, most).map((g) => {
    const names = g.stems.slice(0, SHARED_SHOWN).map((s) => words[g.at[0]!]!.get(s)!);
    const quoted = g.at.map((i) => `"${quoteOf(memories[i]!.text)}"`).join("; ");
    return { text: `${g.at.length} memories share ${names.join(", ")}: ${quoted}`, cites: g.at.map((i) => memories[i]!.id) };
  });
}
