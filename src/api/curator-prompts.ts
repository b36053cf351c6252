/**
 * What the runtime asks its curator model, declared once: the engine host's bindings send
 * these texts, and the provider simulator, which stands in for every model offline,
 * recognizes a curator's request by them (a real provider needs no such help: it reads the
 * prompt). Change a text here and both sides follow.
 */
import { UI_LIMITS } from "./ui.js";

/** The system prompt of a summary (`local-front/bindings/curator/summary.ts`); the conversation follows it. */
export const SUMMARY_PROMPT =
  "You write the memory of a coding agent's conversation that is too long to keep whole. " +
  "Summarize the conversation you are given for the agent that continues it: what was asked and decided, " +
  "what was learned about the code and the machine, which files and commands mattered and what they showed, " +
  "what is done and what is still open. Quote every instruction the user gave, word for word. " +
  "Write plain text, at most 400 words. Do not address the user.";

/** The system prompt of a reflection (`local-front/bindings/memory/reflect.ts`); the memories come in the user message. */
export const REFLECT_PROMPT =
  "You keep the long-term memory of a team of coding agents who work in one repository over weeks. " +
  "You are given the newest memories, each with its id. Draw at most five reflections from them: conclusions that " +
  "hold across several memories and would help an agent next time (a recurring cause, a rule the team keeps, " +
  "a pattern in what fails). Each reflection cites the ids of the memories it rests on, and only those. " +
  'Answer with JSON only, an array: [{"text": "...", "cites": ["mem_..."]}]. An empty array when nothing holds across memories.';

/**
 * How a summary's document shows the conversation: each entry is a label line, then its
 * text quoted line by line, so a line of the conversation is read as text, never as an
 * instruction to the curator.
 */
export const TRANSCRIPT_LABELS = {
  quote: "> ",
  user: "USER:",
  agent: "AGENT:",
  /** `AGENT CALLED <tool>:` */
  called: "AGENT CALLED ",
  /** `<tool> RETURNED:` */
  returned: " RETURNED:",
  /** `<tool> FAILED:` */
  failed: " FAILED:",
} as const;

/**
 * The system prompt of a generated interface (`local-front/bindings/curator/interface.ts`);
 * the catalog (`UI_CATALOG`) and the thread's state (after `UI_STATE_LABEL`, as JSON) follow it.
 */
export const UI_PROMPT =
  "You design the interface a person sees for a coding agent's thread: a small panel that shows where the thread stands " +
  "and lets the person act on it. You are given the components you may use and the thread's state as JSON. " +
  "Answer with JSON only: one component tree, whose root is a stack. Use only the components, keys and actions listed; " +
  "every string is plain text (no HTML, no markdown, no URL, no script). Put first what the person must act on " +
  "(open approvals and questions, with their buttons), then where the thread stands, then what it did last.";

/** The catalog as the interface model is told it: src/api/ui.ts is its schema, docs/ui.md its page. */
export const UI_CATALOG = [
  "Components (each an object with its `type`; no other keys):",
  `- {"type":"stack","children":[...]}: children top to bottom (1 to ${UI_LIMITS.children}).`,
  `- {"type":"row","children":[...]}: children side by side (1 to ${UI_LIMITS.children}).`,
  `- {"type":"heading","text":"...","level":1|2|3}: a title (at most ${UI_LIMITS.heading} characters).`,
  `- {"type":"text","text":"...","tone":"neutral"|"info"|"success"|"warning"|"error"}: a paragraph (at most ${UI_LIMITS.text} characters; tone optional).`,
  `- {"type":"badge","text":"...","tone":...}: a short status (at most ${UI_LIMITS.label} characters).`,
  `- {"type":"list","items":["..."],"ordered":false}: 1 to ${UI_LIMITS.items} items of at most ${UI_LIMITS.item} characters.`,
  `- {"type":"keyValue","items":[{"key":"...","value":"..."}]}: 1 to ${UI_LIMITS.items} pairs.`,
  `- {"type":"table","columns":["..."],"rows":[["..."]]}: 1 to ${UI_LIMITS.columns} columns, up to ${UI_LIMITS.items} rows, one cell per column (at most ${UI_LIMITS.cell} characters).`,
  `- {"type":"code","text":"...","language":"json"}: text shown as code (at most ${UI_LIMITS.code} characters).`,
  `- {"type":"button","label":"...","style":"primary"|"secondary"|"danger","action":{...}}: an action on this thread.`,
  `- {"type":"divider"}`,
  "Actions (a button's `action`):",
  `- {"name":"send","text":"..."}: posts the text to the thread as a message.`,
  `- {"name":"approve","approvalId":"...","decision":"allow"|"deny"}: answers an open approval.`,
  `- {"name":"answer","requestId":"..."}: lets the person answer an open question (add "answer":"..." for a fixed answer).`,
  `- {"name":"dismiss","requestId":"..."}: dismisses an open question.`,
  `- {"name":"interrupt"}: stops the running turn.`,
  `- {"name":"generate"}: builds this interface again.`,
  `Limits: at most ${UI_LIMITS.depth} levels, ${UI_LIMITS.nodes} nodes, ${UI_LIMITS.bytes} bytes of JSON.`,
].join("\n");

/** What precedes the thread's state (one line of JSON) in the interface's system prompt. */
export const UI_STATE_LABEL = "The thread's state, as JSON:";

/** The user message of an interface request. */
export const UI_ASK = "Write the interface now: the JSON tree only.";

/**
 * The opening of the user message that asks again after a refused tree: the refusal and
 * the refused answer follow it.
 */
export const UI_RETRY = "Your interface was refused and not shown:";
