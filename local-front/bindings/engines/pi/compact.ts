import { completeSimple, type AssistantMessage } from "@mariozechner/pi-ai";
import type { SummaryAnswer, SummaryRequest, TranscriptEntry } from "../../../../src/api/engine.js";
import { sessionAccess, type NetworkDeps } from "../access.js";
import { providerOf } from "../../../../src/rules/spawn.js";
import { piModel } from "../providers.js";
import { withSessionRoute } from "../session-network.js";
import { SUMMARY_PROMPT, TRANSCRIPT_LABELS as L } from "../../../../src/api/curator-prompts.js";

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

/** Why a curator's answer is no summary: an error, an empty text, a stream cut off or stopped at its output limit. */
function unusable(m: AssistantMessage): string | null {
  if (m.stopReason === "error" || m.stopReason === "aborted") return m.errorMessage ?? m.stopReason;
  if (m.stopReason === "length") return "the summary was cut at the model's output limit";
  if (m.api !== "anthropic-messages" && m.usage.input + m.usage.output === 0) return "the provider's stream ended before its last frame";
  const text = m.content.map((c) => (c.type === "text" ? c.text : "")).join("").trim();
  return text === "" ? "the model wrote no text" : null;
}

/** Who a curator call is for and on which accounts: what a summary and a reflection share. */
export type CuratorScope = Pick<SummaryRequest, "threadId" | "models" | "account" | "accountChoice" | "proxyEnv" | "timeoutMs">;

/**
 * One curator model call: the curator model, then its fallback, each once, on the
 * accounts a `pi` turn of the thread would use. `document` rides in the system prompt, as
 * what the request is about. A failure of every model is an answer too.
 */
export async function askCurator(
  req: CuratorScope,
  network: NetworkDeps,
  prompt: string,
  document: string,
  ask: string,
  /** Why an answer is no use (it does not parse), so the next model is asked; null when it is. */
  useless: (text: string) => string | null = () => null,
): Promise<{ text: string; model: string } | { error: string }> {
  const errors: string[] = [];
  for (const id of req.models) {
    // The thread's own account serves only the models of its provider; another model takes the workspace's.
    const account = req.account && network.pool.has(req.account) && network.pool.provider(req.account) === providerOf("pi", id) ? req.account : null;
    const chosen = await sessionAccess(network, { ...req, account, turnId: "curator", engine: "pi", model: id, permissions: "deny", cwd: null, transcript: [], freshSession: true, window: null, inputs: [], handoffTo: [], delegated: false });
    if ("failure" in chosen) {
      errors.push(`${id}: ${chosen.failure.error}`);
      continue;
    }
    const { access } = chosen;
    const model = piModel(access, id);
    const signal = AbortSignal.timeout(req.timeoutMs);
    const message = await withSessionRoute(access.route, () =>
      completeSimple(model, { systemPrompt: document ? `${prompt}\n\n${document}` : prompt, messages: [{ role: "user", content: ask, timestamp: Date.now() }] }, { apiKey: access.apiKey, maxRetries: 0, signal }),
    ).catch((err: unknown): null => {
      errors.push(`${id}: ${(err as Error).message}`);
      return null;
    });
    if (!message) continue;
    const why = signal.aborted ? `no answer within ${req.timeoutMs} ms` : unusable(message);
    if (why) {
      errors.push(`${id}: ${why}`);
      continue;
    }
    const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("").trim();
    const no = useless(text);
    if (no) {
      errors.push(`${id}: ${no}`);
      continue;
    }
    return { text, model: id };
  }
  return { error: errors.join("; ") || "no curator model is configured" };
}

/** A `summary` reduction's model call (and a `summary` handoff's). */
export async function writeSummary(req: SummaryRequest, network: NetworkDeps): Promise<SummaryAnswer> {
  const answer = await askCurator(req, network, SUMMARY_PROMPT, `The conversation so far:\n\n${rendered(req.entries)}`, "Write the summary now.");
  return "error" in answer ? answer : { summary: answer.text, model: answer.model };
}
