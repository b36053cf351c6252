import type { Agent, AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, ToolCall } from "@mariozechner/pi-ai";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ApprovalDecision, EngineReport, Json, TurnRequest } from "../../../../src/api/engine.js";
import type { Sandbox } from "../../sandbox/fence.js";
import { loopbackReach } from "../../sandbox/loopback-bridge.js";
import { sessionAccess, tellPool, type NetworkDeps } from "../access.js";
import { piModel, windowOf } from "../providers.js";
import { priceOf } from "../prices.js";
import { INTERRUPTED, refusalText, reportEnd, Waiting, type EngineTurn, type RunOutcome } from "../turn.js";
import { classifyProviderError } from "../provider-failure.js";
import { piTools, type QuestionAnswer } from "./tools.js";
import { withSessionRoute } from "../session-network.js";
import { toMessages } from "./transcript.js";
import { imagesOf, placeAttachments } from "../attachments.js";
import { newId } from "../../../../src/shared/ids.js";
import { isRuntimeTool, type TurnToolAccess } from "../tools/runtime-tools.js";
import { piPackages } from "../../pi-packages.js";

const SYSTEM_PROMPT =
  "You are pi, a coding agent run by an agent runtime. Work in the given working directory with your tools. " +
  "Use ask_user when you need the person to decide something. Be brief.";

export interface PiDeps {
  network: NetworkDeps;
  /** Where threads without a cwd get a working directory of their own. */
  scratchDir: string;
  /** The fence around every tool command and engine process. */
  sandbox: Sandbox;
}

/**
 * Why a finished assistant message is not whole. pi-ai takes a chat or Responses stream
 * that just stops for a finished answer; both protocols send usage only in their last
 * frames, so a message that ends without any usage was cut. (Anthropic's client reports
 * a missing message_stop itself, as an error.)
 */
function unfinishedBy(m: AssistantMessage): "cut" | "length" | null {
  if (m.stopReason === "length") return "length";
  const cut = m.api !== "anthropic-messages" && (m.stopReason === "stop" || m.stopReason === "toolUse") && m.usage.input + m.usage.output === 0;
  return cut ? "cut" : null;
}

function textOf(content: readonly { type: string; text?: string }[] | undefined): string {
  return (content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
}

/**
 * One `pi` turn: a pi-agent-core Agent over the thread's transcript, with the runtime's
 * tools, its permission gate and its questions. Every model call goes out with
 * retries off: a failure is the turn's outcome, and the runtime classifies it.
 */
export function runPiTurn(req: TurnRequest, deps: PiDeps & { tools: TurnToolAccess }, emit: (r: EngineReport) => void): EngineTurn {
  const approvals = new Waiting<ApprovalDecision | "expired" | "interrupted">();
  const questions = new Waiting<QuestionAnswer>();
  let agent: Agent | null = null;
  let interrupted = false;
  /** Steering messages handed to the agent and not yet in its conversation, by the message object it was given. */
  const steering = new Map<AgentMessage, number>();
  let ending = false;
  let lastStatus: number | null = null;

  /** The account the session runs on, once chosen: the pool hears how the turn ended on it. */
  let account: string | null = null;
  const run = async (): Promise<RunOutcome> => {
    const chosen = await sessionAccess(deps.network, req);
    if ("failure" in chosen) return chosen.failure;
    const { access } = chosen;
    account = access.account;
    const model = piModel(access, req.model);
    const priced = priceOf(access.provider, req.model) !== null;
    const apiKey = access.apiKey;
    const scratch = join(deps.scratchDir, req.threadId);
    const cwd = req.cwd ?? scratch;
    await mkdir(cwd, { recursive: true });
    await placeAttachments(cwd, req.inputs);
    const { ai, core } = await piPackages();
    const tools = piTools(ai.Type, {
      owner: req.threadId,
      places: { cwd, own: req.cwd ? [] : [scratch], reach: loopbackReach(access.env), ...(req.worktree ? { worktree: req.worktree } : {}) },
      sandbox: deps.sandbox,
      env: access.env,
      ask: (question, signal) => {
        const requestId = newId("req_");
        emit({ type: "question", requestId, question });
        return questions.wait(requestId, signal, { action: "dismiss" });
      },
      runtime: { scope: deps.tools.scope, link: deps.tools.link },
    });
    // A message the provider did not finish (its stream cut, or stopped at the output limit)
    // may carry a tool call with half its arguments: the turn ends there, running none of them.
    let unfinished: "cut" | "length" | null = null;
    const a = new core.Agent({
      initialState: { systemPrompt: SYSTEM_PROMPT, model, thinkingLevel: "off", tools, messages: toMessages(req.transcript, model) },
      getApiKey: () => apiKey,
      streamFn: (m, ctx, options) =>
        ai.streamSimple(m, ctx, {
          ...options,
          apiKey,
          maxRetries: 0,
          onResponse: (response) => {
            lastStatus = response.status;
          },
        }),
      toolExecution: "sequential",
      beforeToolCall: async ({ toolCall, args }, signal) => {
        // Asking the person acts on nothing here, and the runtime's tools act on the runtime only, each as its route would.
        if (toolCall.name === "ask_user" || isRuntimeTool(toolCall.name) || req.permissions === "allow") return undefined;
        if (req.permissions === "deny") return { block: true, reason: `denied: this thread's permissions are "deny", so ${toolCall.name} was not run` };
        const approvalId = newId("appr_");
        emit({ type: "approval", approvalId, callId: toolCall.id, name: toolCall.name, input: args as Json });
        const decision = await approvals.wait(approvalId, signal, "interrupted");
        if (decision === "allow") return undefined;
        return { block: true, reason: decision === "interrupted" ? "interrupted" : refusalText(decision, toolCall.name) };
      },
    });
    agent = a;
    if (interrupted) return { class: "interrupted", error: "interrupted before the turn started" };
    a.subscribe((event) => {
      if (event.type === "message_update") {
        const e = event.assistantMessageEvent;
        if (e.type === "text_delta") emit({ type: "delta", frame: { type: "text", delta: e.delta } });
      } else if (event.type === "message_end" && event.message.role === "user") {
        // pi-agent-core adds a steering message to the conversation before the next model call;
        // after an interrupt there is no next call, and the runtime gives it to the next turn.
        const seq = steering.get(event.message);
        if (seq !== undefined && !interrupted) (steering.delete(event.message), emit({ type: "steered", seq }));
      } else if (event.type === "message_end" && event.message.role === "assistant") {
        const m = event.message;
        unfinished ??= unfinishedBy(m);
        // Nothing more of this turn: not the cut message's calls, nor a model call answering their refusals.
        if (unfinished) a.abort();
        const reply = textOf(m.content as { type: string; text?: string }[]);
        if (reply) emit({ type: "reply", text: reply });
        for (const c of m.content)
          if (c.type === "toolCall") emit({ type: "tool-call", callId: (c as ToolCall).id, name: (c as ToolCall).name, input: (c as ToolCall).arguments as Json });
        if (m.usage.input + m.usage.output > 0) {
          emit({
            type: "usage",
            model: m.model,
            inputTokens: m.usage.input + m.usage.cacheRead,
            outputTokens: m.usage.output,
            usd: priced ? m.usage.cost.total : null,
            contextWindow: windowOf(access.provider, req.model),
            // Anthropic's input excludes what the call wrote to its cache: the context held that too.
            contextTokens: m.usage.input + m.usage.cacheRead + m.usage.cacheWrite + m.usage.output,
          });
        }
      } else if (event.type === "tool_execution_start") {
        emit({ type: "delta", frame: { type: "tool-start", callId: event.toolCallId, name: event.toolName } });
      } else if (event.type === "tool_execution_end") {
        const result = event.result as { content?: { type: string; text?: string }[] } | undefined;
        emit({ type: "tool-result", callId: event.toolCallId, name: event.toolName, output: textOf(result?.content), isError: event.isError });
      }
    });
    // Images go to a model that reads them; every attachment is also a file in the working directory.
    const seesImages = model.input.includes("image");
    const prompt: AgentMessage[] = req.inputs.map((i) => {
      const images = seesImages ? imagesOf(i) : [];
      const content = images.length === 0 ? i.text : [{ type: "text" as const, text: i.text }, ...images.map((a) => ({ type: "image" as const, data: a.base64, mimeType: a.mediaType }))];
      return { role: "user", content, timestamp: Date.now() };
    });
    // The agent's model calls inherit this context, and with it the session's route out.
    // No inputs: the runtime reduced a turn's context that did not fit, and the turn goes on from it.
    await withSessionRoute(access.route, () => (prompt.length > 0 ? a.prompt(prompt) : a.continue()));
    ending = true;
    if (interrupted) return INTERRUPTED;
    if (unfinished === "cut") return { class: "session", error: "the provider's stream ended before its last frame: the answer was cut off" };
    if (unfinished === "length") return { stop: "length" };
    const last = [...a.state.messages].reverse().find((m): m is AssistantMessage => (m as AssistantMessage).role === "assistant");
    if (last?.stopReason === "aborted") return { class: "interrupted", error: last.errorMessage ?? "aborted" };
    if (last?.stopReason === "error") return classifyProviderError(lastStatus, last.errorMessage ?? "");
    return null;
  };

  const done = reportEnd(tellPool(deps.network, req, () => account, run()), emit, (err) => ({ class: "unknown", error: `pi crashed: ${err.message}` }));

  return {
    done,
    decide: (approvalId, decision) => approvals.settle(approvalId, decision),
    reply: (requestId, answer) => questions.settle(requestId, answer),
    steer: async ({ seq, text }) => {
      if (!agent || ending || interrupted) return false;
      const message: AgentMessage = { role: "user", content: text, timestamp: Date.now() };
      steering.set(message, seq);
      agent.steer(message);
      return true;
    },
    interrupt() {
      interrupted = true;
      agent?.abort();
    },
  };
}
