import type { QuestionReply } from "../../../../src/api/engine.js";
import type { ToolRequestUserInputParams, ToolRequestUserInputResponse } from "./types.js";

/** The runtime's question: each of codex's questions (up to three) with its options. */
export function askedQuestion(params: ToolRequestUserInputParams): string {
  return params.questions
    .map((q) => {
      const options = (q.options ?? []).map((o) => o.label);
      return options.length ? `${q.question} (options: ${options.join(", ")})` : q.question;
    })
    .join("\n");
}

/**
 * The person's reply as codex takes it: an answer for every question (one reply answers
 * them all). Dismissing, or going on without answering, answers none: codex then tells
 * its model the person gave no answer.
 */
export function userInputResponse(params: ToolRequestUserInputParams, reply: QuestionReply): ToolRequestUserInputResponse {
  if (reply.action !== "answer") return { answers: {} };
  return { answers: Object.fromEntries(params.questions.map((q) => [q.id, { answers: [reply.answer ?? ""] }])) };
}
