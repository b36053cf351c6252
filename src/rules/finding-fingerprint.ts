/**
 * A finding's fingerprint: the same finding over rounds of one pull request keeps it, so a
 * finalize can tell a finding already posted on a review thread (`findingMarker`) and not
 * post it again. It is the SHA-256 of four parts, 32 hex characters of it:
 *
 * - the path, and the side (a head line and a removed base line are different places);
 * - the code at the line, whitespace-normalized (runs of blanks are one, none at the ends
 *   or next to punctuation), and not the line number: the same code moved down by an
 *   insertion above is the same place, a reformatted line too; a finding on no line has
 *   none;
 * - the gist of the body, defined below.
 *
 * The gist is what a model keeps when it words the same finding again: the words of the
 * body's headline, as a set. The headline is its first sentence (up to `.`, `!` or `?`
 * before a space, or a line break; fenced code blocks are dropped first, `e.g.` and `i.e.`
 * are not sentence ends). Its words are lowercased, with markdown and code-span marks
 * taken off and camelCase and snake_case split (`userId`, `user_id` and "user ID" are the
 * same words); filler is dropped (articles, forms of be and have, modals and hedges such as
 * may, possibly, seems, deictic words such as this, here, line, prepositions, pronouns, and
 * labels such as nit, bug, major); each word is stemmed (plural to singular, -ed and -ing
 * off: leaks, leaked and leaking are one word; a possessive's 's off); negations (not, no,
 * never, missing, lacks, without, -n't) are one word, and so are null, undefined, nil and
 * none; the set is sorted, so the word order of the sentence does not count. A body whose headline is all filler
 * has its whole text, lowercased and with blanks collapsed, as its gist.
 *
 * So case, punctuation, markdown, code spans, filler, word order, number and tense do not
 * change the gist, nor does anything after the headline; a different problem at the same
 * line names other words in its headline (null vs unused; checked vs not checked) and
 * gets another. The words themselves must recur: a rewording that swaps in synonyms
 * ("unused" for "never used") is a new finding, and two findings of the same words in
 * another order ("rename a to b", "rename b to a") are one.
 */
export async function fingerprintOf(f: { path: string; side: "RIGHT" | "LEFT"; code: string | null; body: string }): Promise<string> {
  const parts = JSON.stringify([f.path, f.side, f.code === null ? null : codeOf(f.code), gistOf(f.body)]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts));
  return [...new Uint8Array(digest)]
    .slice(0, 16)
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

function codeOf(line: string): string {
  return line
    .trim()
    .replace(/\s+/g, " ")
    .replace(/ ?([^\w\s]) ?/g, "$1");
}

const FILLER = new Set(
  (
    // articles, be and have, modals and hedges
    "a an the is are was were be been being am has have had do does did done get gets got " +
    "may might can could would should will shall must possible possibly potential potentially probably likely perhaps maybe seem seems seemed appear appears " +
    "actually really just very quite too also currently still already rather somewhat " +
    // deictic words, pronouns, prepositions, conjunctions
    "this that these those here there it its i we you your our they them their he she " +
    "line lines code of to in on at for with by from as into onto about over under via than then " +
    "and or but so if when whenever where which who whom whose while because since though although " +
    "consider please note suggest suggestion recommend think believe " +
    // labels a reviewer puts before the finding
    "nit nitpick bug issue problem critical major minor blocker blocking important fyi question concern todo"
  ).split(" "),
);

const NEGATION = new Set(["not", "no", "never", "missing", "lack", "lacks", "lacking", "without"]);
const NULLISH = new Set(["null", "undefined", "nil", "none", "nullish"]);

/** The gist of a finding's body (see above): its headline's words as a sorted set. */
export function gistOf(body: string): string[] {
  const words = [...new Set(wordsOf(headlineOf(body)).filter((w) => !FILLER.has(w)).map(canonical))].sort();
  return words.length > 0 ? words : [body.toLowerCase().trim().replace(/\s+/g, " ")];
}

function headlineOf(body: string): string {
  const prose = body
    .replace(/```[\s\S]*?(```|$)/g, "\n")
    .replace(/\b(e\.g|i\.e|etc)\./gi, "$1");
  for (const sentence of prose.split(/[.!?](?=\s|$)|\n/)) if (wordsOf(sentence).some((w) => !FILLER.has(w))) return sentence;
  return "";
}

function wordsOf(text: string): string[] {
  return text
    .replace(/n['’]t\b/gi, " not")
    .replace(/['’]s\b/gi, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

function canonical(word: string): string {
  if (NEGATION.has(word)) return "not";
  if (NULLISH.has(word)) return "null";
  return stem(word);
}

/** Plural to singular and -ed, -ing off, ending on the same letters whichever form came in. */
function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  // dropped / drop, running / run; but called / call, passed / pass
  if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz|ff)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}
