/**
 * The simulator's summary of a conversation: extractive and deterministic. It quotes the
 * sentences a summary must keep (the user's instructions and constraints, facts with
 * names, numbers and paths, decisions, what is still open), drops chatter, and condenses
 * the rest into the commands and files that mattered and where the work stands, within
 * the words the prompt allows. No model reads it: the point is that a summary can be
 * seen, tested and measured offline.
 */

/** One entry of the conversation to summarize. */
export interface Said {
  who: "user" | "agent" | "call" | "result" | "failed";
  text: string;
}

export interface SummaryShape {
  /** The most words the summary may take. */
  words: number;
  /** Claude's `/compact` asks for an `<analysis>` block, then the summary inside `<summary>` tags. */
  tagged: boolean;
}

const INSTRUCTION = /\b(must|never|always|don'?t|do not|should|shall|need to|needs to|have to|has to|required?|make sure|ensure|remember|avoid|only|prefer|please|instead|forbidden|not allowed)\b/i;
/** A sentence that opens with one of these verbs is an imperative: an instruction. */
const IMPERATIVE =
  /^(use|run|keep|write|add|remove|delete|answer|reply|respond|call|check|create|deploy|edit|fix|install|update|rename|move|test|build|commit|push|merge|read|open|set|put|stop|start|ask|tell|send|make|leave|skip|ignore|store|save|print|log|return|quote|refactor|implement|document|let's|go|wait|include|exclude|follow)\b/i;
const DECISION = /\b(decided|decision|agreed|chose|chosen|we will|we'll|going with|settled on|the plan|concluded|turns out|root cause|because)\b/i;
const OPEN = /\b(todo|to do|next|still|remaining|remains|open|pending|later|not yet|unfinished|blocked|waiting)\b/i;
const NUMBER = /\d/;
const PATH = /(?:^|[\s(`'"])(?:\.{0,2}\/)?[\w.-]+\/[\w./-]+|\b[\w-]+\.(?:ts|tsx|js|mjs|json|md|py|go|rs|sh|ya?ml|toml|txt|css|html|sql|lock|env|cfg|ini|c|h|java|rb)\b/;
const NAME = /`[^`]+`|"[^"]+"|\b[A-Z][A-Z0-9]*[_-][A-Z0-9_-]+\b|\b[A-Z]{2,}\b|\b[a-z]+[A-Z]\w*\b|\b\w+_\w+\b/;
/** Acknowledgements and greetings carry nothing the next agent needs: a sentence of these words only is chatter. */
const CHATTER_WORDS = new Set(
  "hi hello hey there thanks thank you ok okay sure great cool nice good yes no yep nope got it sounds perfect done noted will do understood alright right fine a lot so much again welcome".split(" "),
);
const isChatter = (text: string) => (text.toLowerCase().match(/[a-z']+/g) ?? []).every((w) => CHATTER_WORDS.has(w));
const FAILURE = /\b(error|failed|failure|exception|not found|denied|refused|cannot|can't|fatal|panic|timed out|traceback)\b/i;

/** Sentences shorter than this, with no cue, are fragments ("step 4"), not content. */
const MIN_WORDS = 3;
/** A sentence longer than this is cut: one long paragraph must not take the whole budget. */
const SENTENCE_WORDS = 60;
/** Characters a word may take on average in a quote. */
const WORD_CHARS = 12;
/** A quoted last message: enough to say what was asked. */
const LAST_WORDS = 40;
/** Commands and files named, newest first. */
const MOST_REFERENCES = 6;
const REFERENCE_CHARS = 120;
const REFERENCE_KEYS = /command|cmd|path|file|dir|url|pattern|query/i;

interface Sentence {
  text: string;
  who: "user" | "agent" | "failed";
  /** Its place in the conversation: the summary quotes in the conversation's order, and prefers the newest. */
  at: number;
  score: number;
}

const words = (text: string) => text.split(/\s+/).filter((w) => w !== "").length;

/** At most `most` words, and a word's worth of characters each: a tool's output can be one long word. */
function clipWords(text: string, most: number): string {
  const all = text.split(/\s+/).filter((w) => w !== "");
  const clipped = all.length <= most ? all.join(" ") : `${all.slice(0, most).join(" ")} …`;
  return clipped.length <= most * WORD_CHARS ? clipped : `${clipped.slice(0, most * WORD_CHARS)} …`;
}

const USER_HEADING = "The user's instructions and facts, word for word:";
const WORK_HEADING = "What the agent found and decided:";
const REFERENCES_HEADING = "Commands and files it used, newest first:";
const STATE_HEADING = "Where it stands:";

/** An earlier summary's "where it stands" is no longer where it stands: its section, to the next blank line, goes. */
function withoutStaleState(text: string): string {
  return text.replace(new RegExp(`^${STATE_HEADING}\\n(?:.+\\n?)*`, "gm"), "");
}

/**
 * The sentences of a text. A line is never joined to the next (a list item or a heading is
 * its own sentence); within a line, a sentence ends at `.`, `!` or `?` before a space. A
 * line that ends with a colon is a heading and a line wholly in brackets a marker: neither
 * is content, which also keeps a summary of a summary from quoting its headings.
 */
function sentencesOf(text: string): string[] {
  return withoutStaleState(text)
    .split(/\r?\n/)
    .map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").trim())
    .filter((line) => line !== "" && !line.endsWith(":") && !/^\[[^\]]*\]$/.test(line))
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=\S)/))
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** How much a summary needs this sentence; 0 for chatter. */
function scoreOf(text: string, who: Sentence["who"]): number {
  const instruction = INSTRUCTION.test(text) || IMPERATIVE.test(text);
  const decision = DECISION.test(text);
  if (isChatter(text)) return 0;
  if (words(text) < MIN_WORDS && !instruction && !decision) return 0;
  const facts = [NUMBER, PATH, NAME].filter((re) => re.test(text)).length;
  const base = who === "user" ? 3 : who === "failed" ? 2 : 0;
  const score = base + (instruction ? 4 : 0) + (decision ? 3 : 0) + (OPEN.test(text) ? 1 : 0) + Math.min(facts, 2);
  // Agent sentences without a cue are narration: the result they describe is kept as a reference.
  return who === "agent" && score < 3 ? 0 : score;
}

/** The sentences worth keeping, each once (its first place), with their scores. */
function candidates(said: Said[]): Sentence[] {
  const seen = new Set<string>();
  const out: Sentence[] = [];
  let at = 0;
  for (const s of said) {
    if (s.who === "call" || s.who === "result") continue;
    // A failed tool says what went wrong in its first line that names a failure.
    const texts = s.who === "failed" ? sentencesOf(s.text).filter((t) => FAILURE.test(t)).slice(0, 1) : sentencesOf(s.text);
    for (const raw of texts) {
      const text = clipWords(raw, SENTENCE_WORDS);
      const key = text.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      const score = scoreOf(text, s.who);
      if (score > 0) out.push({ text, who: s.who, at: at++, score });
    }
  }
  return out;
}

/** The commands and paths the agent's tool calls named, newest first, each once. */
function references(said: Said[]): string[] {
  const out: string[] = [];
  for (const s of [...said].reverse()) {
    if (s.who !== "call") continue;
    let input: unknown;
    try {
      input = JSON.parse(s.text);
    } catch {
      continue;
    }
    if (typeof input !== "object" || input === null) continue;
    for (const [key, value] of Object.entries(input)) {
      // What was run or opened, not the call's description or its file contents.
      if (!REFERENCE_KEYS.test(key) || typeof value !== "string" || value === "" || value.length > REFERENCE_CHARS) continue;
      if (!out.includes(value)) out.push(value);
    }
    if (out.length >= MOST_REFERENCES) break;
  }
  return out.slice(0, MOST_REFERENCES);
}

/** A sentence as the summary quotes it: ending in a full stop, so sentences read apart again. */
const asSentence = (text: string) => (/[.!?…"')\]]$/.test(text) ? text : `${text}.`);

/** The newest message of `who` that says more than chatter, without its chatter. */
function lastOf(said: Said[], who: Said["who"]): string | undefined {
  for (const s of [...said].reverse()) {
    if (s.who !== who) continue;
    const content = sentencesOf(s.text).filter((t) => !isChatter(t));
    if (content.length > 0) return content.join(" ");
  }
  return undefined;
}

/** The summary of `said`, in the shape asked. */
export function summarize(said: Said[], shape: SummaryShape): string {
  const budget = Math.max(shape.words, 20);
  const sections: string[] = [];

  const lastUser = lastOf(said, "user");
  const lastAgent = lastOf(said, "agent");
  const state = [
    lastUser !== undefined ? `The user last asked: "${clipWords(lastUser, Math.min(LAST_WORDS, Math.floor(budget / 8)))}"` : "",
    lastAgent !== undefined ? `The agent last answered: "${clipWords(lastAgent, Math.min(LAST_WORDS, Math.floor(budget / 10)))}"` : "",
  ].filter((t) => t !== "");
  const stateText = state.length > 0 ? `${STATE_HEADING}\n${state.join(" ")}` : "";

  const refs = references(said);
  let refText = refs.length > 0 ? `${REFERENCES_HEADING}\n${refs.map((r) => `\`${r}\``).join(", ")}.` : "";
  if (words(refText) > budget / 5) refText = "";

  // What the quoted sentences may take: the budget less the other sections and their headings.
  let left = budget - words(stateText) - words(refText) - words(USER_HEADING) - words(WORK_HEADING);
  const chosen: Sentence[] = [];
  const byNeed = candidates(said).sort((a, b) => b.score - a.score || b.at - a.at);
  for (const s of byNeed) {
    const cost = words(s.text);
    if (cost > left) continue;
    chosen.push(s);
    left -= cost;
  }
  chosen.sort((a, b) => a.at - b.at);
  const fromUser = chosen.filter((s) => s.who === "user").map((s) => asSentence(s.text));
  const fromWork = chosen.filter((s) => s.who !== "user").map((s) => asSentence(s.text));
  if (fromUser.length > 0) sections.push(`${USER_HEADING}\n${fromUser.join(" ")}`);
  if (fromWork.length > 0) sections.push(`${WORK_HEADING}\n${fromWork.join(" ")}`);
  if (refText !== "") sections.push(refText);
  if (stateText !== "") sections.push(stateText);
  if (sections.length === 0) sections.push("Nothing in the conversation needs keeping.");
  const summary = sections.join("\n\n");
  if (!shape.tagged) return summary;
  const counted = (who: Said["who"]) => said.filter((s) => s.who === who).length;
  const analysis = `Read ${counted("user")} user messages, ${counted("agent")} agent messages and ${counted("call")} tool calls; kept the user's instructions and facts word for word, and dropped chatter.`;
  return `<analysis>\n${analysis}\n</analysis>\n\n<summary>\n${summary}\n</summary>`;
}
