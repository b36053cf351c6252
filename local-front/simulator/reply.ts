import { personText, type Conversation, type Entry } from "./conversation.js";
import { parseDirectives, type Directive, type ToolStep } from "./directive.js";
import { BadRequest, isMidstream, type MidstreamFail, type SimError } from "./errors.js";
import { simTokens, simulatedFault } from "./models.js";
import { simulatedWindow } from "../../src/api/simulated-models.js";
import { curatorRequest } from "./curator-requests.js";

export interface Usage {
  input: number;
  output: number;
}

/** A piece of the message and the deltas it streams in. */
export interface Part {
  text: string;
  pieces: string[];
}

export interface Call {
  name: string;
  /** A Responses namespace's function is called by its own name, with its namespace beside it. */
  namespace?: string;
  input: Record<string, unknown>;
  /** The input as JSON; its pieces are the arguments' deltas. */
  arguments: Part;
}

/** Why the message ended: its answer is whole, it waits on tool results, or the output limit cut it. */
export type Stop = "end" | "tool" | "length";

/**
 * One assistant message, in the order real models write it: reasoning first, then text,
 * then tool calls (several when they are made together).
 */
export interface Reply {
  reasoning: Part | null;
  text: Part | null;
  calls: Call[];
  stop: Stop;
  usage: Usage;
  delayMs: number;
  /** After the first delta the answer fails this way, like a provider that breaks mid-reply. */
  cut: MidstreamFail | null;
}

export type Outcome = { reply: Reply } | { error: SimError };

const DEFAULT_CHUNKS = 3;


/**
 * A script names one tool (`shell`, or `ask_user` for `ask`); each engine offers its own.
 * When the request does not offer the named tool but offers an engine's shell or question
 * tool, the call goes to that one, with the input in its shape, so one script drives
 * every engine. A runtime tool (`delegate`) goes to the runtime's MCP server's, where
 * the request offers that instead (`mcp__runtime__delegate`).
 */
function engineTool({ name, input }: ToolStep, offered: string[]): ToolStep {
  if (offered.includes(name)) return { name, input };
  // The runtime's own tools: engine_a and engine_b reach them as the MCP server `runtime`.
  if (offered.includes(`${RUNTIME_MCP}${name}`)) return { name: `${RUNTIME_MCP}${name}`, input };
  if (name === "ask_user") {
    const question = String(input.question ?? "");
    const options = [
      { label: "Yes", description: "Go ahead" },
      { label: "No", description: "Do not" },
    ];
    if (offered.includes("AskUserQuestion")) return { name: "AskUserQuestion", input: { questions: [{ question, header: "Question", options, multiSelect: false }] } };
    if (offered.includes("request_user_input")) return { name: "request_user_input", input: { questions: [{ id: "question", header: "Question", question, options }] } };
  }
  if (name !== "shell") return { name, input };
  const command = typeof input.command === "string" ? input.command : Array.isArray(input.command) ? input.command.join(" ") : "";
  if (offered.includes("Bash")) return { name: "Bash", input: { command, description: "run the scripted command" } };
  // login: false, or bash -l prints the login profile's noise into every output.
  if (offered.includes("exec_command")) return { name: "exec_command", input: { cmd: command, login: false } };
  return { name, input };
}
const RESULT_ECHO_LIMIT = 2000;
const RUNTIME_MCP = "mcp__runtime__";

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
    if (entry.role === "user") texts.unshift(personText(entry.text));
  }
  return { userText: texts.join("\n"), newest: texts.at(-1) ?? "", results: entries.slice(last + 1).filter((e) => e.role === "tool") };
}

/** The tool steps of the turn, in order; each step is one message, its calls made together. */
function steps(d: Directive): ToolStep[][] {
  const plan: ToolStep[][] = [];
  if (d.tool) plan.push([d.tool]);
  if (d.tools) plan.push(d.tools);
  if (d.ask !== undefined) plan.push([{ name: "ask_user", input: { question: d.ask } }]);
  return plan;
}

/** The step the results so far call for: a step is done once each of its calls has a result. */
function dueStep(plan: ToolStep[][], results: number): ToolStep[] | undefined {
  let answered = 0;
  for (const step of plan) {
    answered += step.length;
    if (results < answered) return step;
  }
  return undefined;
}

/** `plain` is what the model writes unscripted: the echo, or a curator's summary or reflections. */
function answerText(d: Directive, plain: () => string, results: Entry[]): string {
  if (d.stall && results.length > 0) return "";
  if (d.reply !== undefined) return d.reply;
  const result = results.at(-1)?.text ?? "";
  if (d.ask !== undefined) return `you answered: ${result}`;
  const named = d.tool ?? d.tools?.at(-1);
  if (named) return `tool ${named.name} returned: ${result.slice(0, RESULT_ECHO_LIMIT)}`;
  return plain();
}

/** A model cannot call a tool the request does not offer; a script that asks for one is wrong. */
function offeredOrRefused(call: ToolStep, offered: string[]): ToolStep {
  if (offered.includes(call.name)) return call;
  const list = offered.length === 0 ? "the request offers no tools" : `offered: ${offered.join(", ")}`;
  throw new BadRequest(`@sim directive: tool "${call.name}" is not offered by this request (${list})`);
}

/**
 * What the simulated model does for this request; throws BadRequest for a bad directive.
 * `org` is the organization of the caller's credential, when the simulator checks them.
 */
export function decide(conv: Conversation, org: string | null = null): Outcome {
  const inputChars = conv.entries.reduce((sum, e) => sum + e.text.length, 0);
  const window = simulatedWindow(conv.model);
  // Checked before any directive, as a provider refuses the prompt before reading it.
  if (window !== undefined && simTokens(inputChars) > window) return { error: { kind: "context", model: conv.model, window, tokens: simTokens(inputChars) } };
  const curator = curatorRequest(conv);
  const { userText, newest, results } = curator?.turn ?? currentTurn(conv.entries);
  const { directive: written } = parseDirectives(newest);
  const directive = { ...written, ...simulatedFault(conv.model) };
  const spared = (directive.failFor && !directive.failFor.includes(conv.model)) || (directive.failOrgs && !(org && directive.failOrgs.includes(org)));
  const d = spared ? { ...directive, fail: undefined } : directive;
  const { text } = parseDirectives(userText);
  const firstStep = results.length === 0;
  if (firstStep && d.fail !== undefined && !isMidstream(d.fail))
    return { error: { kind: "fail", fail: d.fail, model: conv.model, retryAfter: d.retryAfter ?? 1 } };

  const chunks = d.chunks ?? DEFAULT_CHUNKS;
  const part = (t: string): Part => ({ text: t, pieces: splitPieces(t, chunks) });
  const step = dueStep(steps(d), results.length);
  const calls = (step ?? []).map((s) => (s.unoffered ? s : offeredOrRefused(engineTool(s, conv.tools), conv.tools)));
  const answer = step ? (d.say ?? null) : answerText(d, curator?.answer ?? (() => `echo: ${text.trim()}`), results);
  const produced = (answer ?? "") + (d.reasoning ?? "") + calls.map((c) => JSON.stringify(c.input)).join("");
  return {
    reply: {
      reasoning: d.reasoning !== undefined ? part(d.reasoning) : null,
      text: answer !== null ? part(answer) : null,
      calls: calls.map((c) => ({ ...(conv.namespaced[c.name] ?? { name: c.name }), input: c.input, arguments: part(JSON.stringify(c.input)) })),
      stop: step ? "tool" : d.stop === "length" ? "length" : "end",
      usage: { input: d.usage?.input ?? simTokens(inputChars), output: d.usage?.output ?? simTokens(produced.length) },
      delayMs: d.delayMs ?? 0,
      cut: firstStep && d.fail !== undefined && isMidstream(d.fail) ? d.fail : null,
    },
  };
}

/** Every delta of the message, in the order it streams them. */
export function deltaCount(reply: Reply): number {
  return (reply.reasoning?.pieces.length ?? 0) + (reply.text?.pieces.length ?? 0) + reply.calls.reduce((n, c) => n + c.arguments.pieces.length, 0);
}
