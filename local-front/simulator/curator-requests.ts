import { REFLECT_PROMPT, SUMMARY_PROMPT, TRANSCRIPT_LABELS as L, UI_PROMPT } from "../../src/api/curator-prompts.js";
import { personText, type Conversation, type Entry } from "./conversation.js";
import { isDirectiveLine } from "./directive.js";
import { interfaceAnswer } from "./interfaces.js";
import { reflect, type Memory } from "./reflections.js";
import { summarize, type Said, type SummaryShape } from "./summary.js";

/**
 * Requests that ask the model to curate rather than to act: summarize a conversation,
 * reflect on memories, or design a thread's interface. The simulator knows them by their prompts' texts: the runtime's
 * own, declared in `src/api/curator-prompts.ts`, and the engines' own compaction prompts,
 * whose opening words are below. What to write (how many words, which tags, how many
 * reflections) it reads from the prompt, as a model would.
 */
export interface CuratorRequest {
  /** The answer a model would write when no directive says otherwise. */
  answer: () => string;
  /**
   * An engine's compaction prompt is the request's newest text: the turn the model answers,
   * even where it rides along with the last tool results (Claude's `/compact`). The
   * conversation before it is what to summarize, and its directives script nothing.
   */
  turn?: { userText: string; newest: string; results: Entry[] };
}

/**
 * The opening words of the engines' own compaction prompts: the Claude agent SDK's
 * `/compact` (its CLI 2.1.x) and codex's compaction turn (0.160.0).
 */
const ENGINE_SUMMARY_PROMPTS = ["Your task is to create a detailed summary of", "You are performing a CONTEXT CHECKPOINT COMPACTION"];

const DEFAULT_WORDS = 400;
const DEFAULT_REFLECTIONS = 5;
const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

function shapeOf(prompt: string): SummaryShape {
  const limit = /\b(?:at most|no more than|up to|under|fewer than|within)\s+([\d,]+)\s+words\b/i.exec(prompt);
  return { words: limit ? Number(limit[1]!.replace(/,/g, "")) : DEFAULT_WORDS, tagged: prompt.includes("<summary>") };
}

function countOf(prompt: string): number {
  const m = /\bat most (\w+) reflections?\b/i.exec(prompt);
  if (!m) return DEFAULT_REFLECTIONS;
  const n = /^\d+$/.test(m[1]!) ? Number(m[1]) : NUMBER_WORDS.indexOf(m[1]!.toLowerCase());
  return n > 0 ? n : DEFAULT_REFLECTIONS;
}

/** What the person wrote, without the simulator's scripts. */
const spoken = (text: string) =>
  personText(text)
    .split(/\r?\n/)
    .filter((l) => !isDirectiveLine(l))
    .join("\n");

/** The runtime's summary document: label lines, each followed by its entry's text quoted line by line. */
function fromDocument(document: string): Said[] {
  const said: Said[] = [];
  for (const line of document.split("\n")) {
    if (line.startsWith(L.quote) || line === L.quote.trimEnd()) {
      const last = said.at(-1);
      if (last) last.text += `${last.text === "" ? "" : "\n"}${line.slice(L.quote.length)}`;
      continue;
    }
    const who: Said["who"] | null =
      line === L.user ? "user" : line === L.agent ? "agent" : line.startsWith(L.called) ? "call" : line.endsWith(L.failed) ? "failed" : line.endsWith(L.returned) ? "result" : null;
    if (who) said.push({ who, text: "" });
  }
  return said.map((s) => (s.who === "user" ? { ...s, text: spoken(s.text) } : s));
}

/**
 * The agent SDK hands its earlier summary back as a user message in words of its own
 * (what the session is, where the transcript lies, to go on without asking): only the
 * summary inside is the conversation's. Codex's wrapper is one line ending in a colon,
 * which a summary never quotes anyway.
 */
const CLAUDE_CARRIER = /^This session is being continued from a previous conversation[\s\S]*?\nSummary:\n([\s\S]*?)(?:\n\nIf you need specific details from before compaction[\s\S]*)?$/;

/** A protocol's conversation as said: the assistant's tool calls are the JSON lines of its entries. */
function fromEntries(entries: Entry[]): Said[] {
  return entries.flatMap((e): Said[] => {
    if (e.role === "user") return [{ who: "user", text: spoken(e.text).replace(CLAUDE_CARRIER, "$1") }];
    if (e.role === "tool") return [{ who: "result", text: e.text }];
    if (e.role !== "assistant") return [];
    const lines = e.text.split("\n");
    const isCall = (l: string) => l.startsWith("{") && l.endsWith("}");
    const text = lines.filter((l) => !isCall(l)).join("\n");
    return [...(text.trim() === "" ? [] : [{ who: "agent" as const, text }]), ...lines.filter(isCall).map((l) => ({ who: "call" as const, text: l }))];
  });
}

/** The memories of a reflection request: `- [id] (kind) text`, continued on lines indented by two spaces. */
function memoriesOf(text: string): Memory[] {
  const out: Memory[] = [];
  for (const line of text.split("\n")) {
    const m = /^- \[([^\]]+)\] \(([^)]+)\) ?(.*)$/.exec(line);
    if (m) out.push({ id: m[1]!, kind: m[2]!, text: m[3]! });
    else if (line.startsWith("  ") && out.length > 0) out.at(-1)!.text += `\n${line.trim()}`;
  }
  return out.map((m) => ({ ...m, text: m.text.replace(/&lt;/g, "<").replace(/&gt;/g, ">") }));
}

/** The curator's task this request asks for, or null for any other request. */
export function curatorRequest(conv: Conversation): CuratorRequest | null {
  const system = conv.entries.find((e) => e.role === "context")?.text ?? "";
  const last = conv.entries.at(-1);
  if (system.startsWith(SUMMARY_PROMPT)) return { answer: () => summarize(fromDocument(system.slice(SUMMARY_PROMPT.length)), shapeOf(SUMMARY_PROMPT)) };
  if (system.startsWith(REFLECT_PROMPT)) {
    const asked = [...conv.entries].reverse().find((e) => e.role === "user")?.text ?? "";
    return { answer: () => JSON.stringify(reflect(memoriesOf(spoken(asked)), countOf(REFLECT_PROMPT)), null, 2) };
  }
  if (system.startsWith(UI_PROMPT)) {
    const asked = [...conv.entries].reverse().find((e) => e.role === "user")?.text ?? "";
    return { answer: () => interfaceAnswer(system, asked) };
  }
  if (!last || (last.role !== "user" && last.role !== "context") || !ENGINE_SUMMARY_PROMPTS.some((p) => last.text.includes(p))) return null;
  const prompt = last.text;
  return { answer: () => summarize(fromEntries(conv.entries.slice(0, -1)), shapeOf(prompt)), turn: { userText: prompt, newest: prompt, results: [] } };
}
