import type { PermissionResult } from "@anthropic-ai/claude-agent-sdk";
import type { QuestionReply } from "../../../../src/api/engine.js";

/** The agent's tool for asking the person; the CLI asks its host (canUseTool) for the answers. */
export const QUESTION_TOOL = "AskUserQuestion";

interface Asked {
  question: string;
  options?: { label: string }[];
}

function asked(input: Record<string, unknown>): Asked[] {
  return Array.isArray(input.questions) ? (input.questions as Asked[]).filter((q) => typeof q?.question === "string") : [];
}

/** The runtime's question: each of the agent's questions (it may ask up to four) with its options. */
export function askedQuestion(input: Record<string, unknown>): string {
  return asked(input)
    .map((q) => {
      const options = (q.options ?? []).map((o) => o.label).filter((l) => typeof l === "string");
      return options.length ? `${q.question} (options: ${options.join(", ")})` : q.question;
    })
    .join("\n");
}

/**
 * The person's reply as the CLI takes it: an answer fills `answers` for every question
 * (one reply answers them all), which the tool then returns to the agent; a dismissal or
 * "continue without" refuses the call with words that tell the agent what happened.
 */
export function questionAnswer(input: Record<string, unknown>, reply: QuestionReply): PermissionResult {
  if (reply.action === "answer") {
    const answers = Object.fromEntries(asked(input).map((q) => [q.question, reply.answer ?? ""]));
    return { behavior: "allow", updatedInput: { ...input, answers } };
  }
  return {
    behavior: "deny",
    message:
      reply.action === "dismiss"
        ? "The person dismissed the question without answering it."
        : "The person chose to continue without answering: decide for yourself and go on.",
  };
}
