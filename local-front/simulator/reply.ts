import type { Conversation, Entry } from "./conversation.js";
import { parseDirectives, type Directive } from "./directive.js";
import type { SimError } from "./errors.js";

export interface Usage {
  input: number;
  output: number;
}

interface ReplyBase {
  /** The streamed deltas: of the text, or of the tool call's JSON arguments. */
  pieces: string[];
  usage: Usage;
  delayMs: number;
  /** Die after the first delta, like a provider that drops mid-reply. */
  disconnect: boolean;
}

export type Reply =
  | (ReplyBase & { kind: "text"; text: string })
  | (ReplyBase & { kind: "tool"; name: string; input: Record<string, unknown>; arguments: string });

export type Outcome = { reply: Reply } | { error: SimError };

const DEFAULT_CHUNKS = 3;

/**
 * Coding-agent CLIs put their own context into user messages inside these tags; it is
 * not what the person wrote, so the echo and the directives leave it out.
 */
const CLIENT_CONTEXT = /<(system-reminder|environment_context|turn_aborted)>[\s\S]*?<\/\1>\s*/g;

/**
 * A script names one tool (`shell`); each engine offers its own. When the request does
 * not offer the named tool but offers an engine's shell tool, the call goes to that one,
 * with the input in its shape, so one script drives every engine.
 */
function engineTool(name: string, input: Record<string, unknown>, offered: string[]): { name: string; input: Record<string, unknown> } {
  if (offered.length === 0 || offered.includes(name) || name !== "shell") return { name, input };
  const command = typeof input.command === "string" ? input.command : Array.isArray(input.command) ? input.command.join(" ") : "";
  if (offered.includes("Bash")) return { name: "Bash", input: { command, description: "run the scripted command" } };
  // login: false, or bash -l prints the login profile's noise into every output.
  if (offered.includes("exec_command")) return { name: "exec_command", input: { cmd: command, login: false } };
  return { name, input };
}
const RESULT_ECHO_LIMIT = 2000;

/** Roughly equal pieces, split on code points so no delta carries half a surrogate pair. */
export function splitPieces(text: string, chunks: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [""];
  const n = Math.min(chunks, chars.length);
  const size = Math.floor(chars.length / n);
  const extra = chars.length % n;
  const pieces: string[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const len = size + (i < extra ? 1 : 0);
    pieces.push(chars.slice(at, at + len).join(""));
    at += len;
  }
  return pieces;
}

function tokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/**
 * The current user turn: the last user entry and the user entries right before it, back to
 * the previous reply or tool result. Tool results after it tell which scripted step is due.
 * Only the newest user entry can script the reply: an earlier message whose turn failed
 * (and so got no reply) must not script every turn after it.
 */
function currentTurn(entries: Entry[]): { userText: string; newest: string; results: Entry[] } {
  let last = entries.length - 1;
  while (last >= 0 && entries[last]!.role !== "user") last--;
  const texts: string[] = [];
  for (let i = last; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.role === "assistant" || entry.role === "tool") break;
    if (entry.role === "user") texts.unshift(entry.text.replace(CLIENT_CONTEXT, ""));
  }
  return { userText: texts.join("\n"), newest: texts.at(-1) ?? "", results: entries.slice(last + 1).filter((e) => e.role === "tool") };
}

function steps(d: Directive): { name: string; input: Record<string, unknown> }[] {
  return [...(d.tool ? [d.tool] : []), ...(d.ask !== undefined ? [{ name: "ask_user", input: { question: d.ask } }] : [])];
}

function answerText(d: Directive, echo: string, results: Entry[]): string {
  if (d.stall && results.length > 0) return "";
  if (d.reply !== undefined) return d.reply;
  const result = results.at(-1)?.text ?? "";
  if (d.ask !== undefined) return `you answered: ${result}`;
  if (d.tool) return `tool ${d.tool.name} returned: ${result.slice(0, RESULT_ECHO_LIMIT)}`;
  return `echo: ${echo.trim()}`;
}

/**
 * What the simulated model does for this request; throws BadRequest for a bad directive.
 * `org` is the organization of the caller's credential, when the simulator checks them.
 */
export function decide(conv: Conversation, org: string | null = null): Outcome {
  const { userText, newest, results } = currentTurn(conv.entries);
  const { directive } = parseDirectives(newest);
  const spared = (directive.failFor && !directive.failFor.includes(conv.model)) || (directive.failOrgs && !(org && directive.failOrgs.includes(org)));
  const d = spared ? { ...directive, fail: undefined } : directive;
  const { text } = parseDirectives(userText);
  const firstStep = results.length === 0;
  if (firstStep && d.fail !== undefined && d.fail !== "disconnect")
    return { error: { kind: "fail", fail: d.fail, model: conv.model, retryAfter: d.retryAfter ?? 1 } };

  const inputChars = conv.entries.reduce((sum, e) => sum + e.text.length, 0);
  const base = { delayMs: d.delayMs ?? 0, disconnect: firstStep && d.fail === "disconnect" };
  const chunks = d.chunks ?? DEFAULT_CHUNKS;
  const usage = (produced: string): Usage => ({ input: d.usage?.input ?? tokens(inputChars), output: d.usage?.output ?? tokens(produced.length) });

  const plan = steps(d);
  const scripted = plan[results.length];
  const step = scripted ? engineTool(scripted.name, scripted.input, conv.tools) : undefined;
  if (step) {
    const args = JSON.stringify(step.input);
    return { reply: { ...base, kind: "tool", name: step.name, input: step.input, arguments: args, pieces: splitPieces(args, chunks), usage: usage(args) } };
  }
  const answer = answerText(d, text, results);
  return { reply: { ...base, kind: "text", text: answer, pieces: splitPieces(answer, chunks), usage: usage(answer) } };
}
