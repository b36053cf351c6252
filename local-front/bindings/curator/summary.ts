import type { SummaryAnswer, SummaryRequest, TranscriptEntry } from "../../../src/api/engine.js";
import type { NetworkDeps } from "../engines/access.js";
import { SUMMARY_PROMPT, TRANSCRIPT_LABELS as L } from "../../../src/api/curator-prompts.js";
import { askCurator } from "./call.js";

/** A tool result in the curator's input: its start is enough to say what it showed. */
const RESULT_CHARS = 2000;
/** The whole input, newest kept: about 100,000 tokens. */
const INPUT_CHARS = 400_000;

/**
 * The cut range as one document. Every line is quoted, so a line of the conversation is
 * read as its text and never as an instruction to the curator's client or model.
 */
export function rendered(entries: TranscriptEntry[]): string {
  const quote = (text: string) => text.split("\n").map((l) => `${L.quote}${l}`).join("\n");
  const parts = entries.map((e) => {
    switch (e.role) {
      case "user":
        return `${L.user}\n${quote(e.text)}`;
      case "assistant":
        return `${L.agent}\n${quote(e.text)}`;
      case "tool-call":
        return `${L.called}${e.name}:\n${quote(JSON.stringify(e.input))}`;
      case "tool-result": {
        const out = e.output.length > RESULT_CHARS ? `${e.output.slice(0, RESULT_CHARS)}\n[${e.output.length - RESULT_CHARS} more characters]` : e.output;
        return `${e.name}${e.isError ? L.failed : L.returned}\n${quote(out)}`;
      }
    }
  });
  const text = parts.join("\n\n");
  return text.length > INPUT_CHARS ? `[the oldest ${text.length - INPUT_CHARS} characters left out]\n${text.slice(-INPUT_CHARS)}` : text;
}

/** A `summary` reduction's model call (and a `summary` handoff's). */
export async function writeSummary(req: SummaryRequest, network: NetworkDeps): Promise<SummaryAnswer> {
  const answer = await askCurator(req, network, SUMMARY_PROMPT, `The conversation so far:\n\n${rendered(req.entries)}`, "Write the summary now.");
  return "error" in answer ? answer : { summary: answer.text, model: answer.model };
}
