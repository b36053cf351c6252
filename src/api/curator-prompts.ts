/**
 * What the runtime asks its curator model, declared once: the engine host's bindings send
 * these texts, and the provider simulator, which stands in for every model offline,
 * recognizes a curator's request by them (a real provider needs no such help: it reads the
 * prompt). Change a text here and both sides follow.
 */

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
