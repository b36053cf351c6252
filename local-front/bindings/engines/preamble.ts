import type { TranscriptEntry } from "../../../src/api/engine.js";

/**
 * The conversation so far as text, for an engine that starts a new session on a thread
 * that already has one (a fork, or a failover to another engine): its own session
 * state cannot hold what another engine said.
 */
export function preamble(transcript: TranscriptEntry[]): string {
  if (transcript.length === 0) return "";
  const lines = transcript.map((e) =>
    e.role === "user" || e.role === "assistant"
      ? `[${e.role}] ${e.text}`
      : e.role === "tool-call"
        ? `[tool call ${e.name}] ${JSON.stringify(e.input)}`
        : `[tool result ${e.name}] ${e.output.slice(0, 4000)}`,
  );
  return `Earlier in this conversation:\n${lines.join("\n")}\n\n`;
}
