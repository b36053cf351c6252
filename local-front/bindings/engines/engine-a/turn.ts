import type { HookCallback, PermissionResult, SDKCompactBoundaryMessage, SDKMessage, SDKUserMessage, SpawnedProcess } from "@anthropic-ai/claude-agent-sdk";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ApprovalDecision, EngineReport, Json, QuestionReply, TurnRequest } from "../../../../src/api/engine.js";
import type { Sandbox } from "../../sandbox/fence.js";
import type { EngineABinary } from "./binary.js";
import { loopbackReach } from "../../sandbox/loopback-bridge.js";
import { RUNTIME_TOOL_NAMES, RUNTIME_TOOLS_SERVER } from "../../../../src/api/tools.js";
import { withTools, type TurnToolAccess } from "../tools/runtime-tools.js";
import { classifyProviderError } from "../provider-failure.js";
import { windowOf } from "../providers.js";
import { sessionAccess, tellPool, type NetworkDeps } from "../access.js";
import { engineHome, SessionStore } from "../sessions.js";
import { childEnv } from "../child-env.js";
import { preamble } from "../preamble.js";
import { engineDied, INTERRUPTED, refusalText, reportEnd, Waiting, type EngineTurn, type RunOutcome } from "../turn.js";
import type { ChildProcess } from "node:child_process";
import { askedQuestion, questionAnswer, QUESTION_TOOL } from "./questions.js";
import { newId } from "../../../../src/shared/ids.js";
import { imagesOf, placeAttachments } from "../attachments.js";
import { simulatedImages } from "../../../../src/api/simulated-models.js";

export interface EngineADeps {
  network: NetworkDeps;
  /** Engine resume state (sessions, the CLI's config dir): `SERVICE_ENGINE_STATE_DIR`. */
  stateDir: string;
  scratchDir: string;
  /** The agent's process, and so every tool command it runs, lives inside it. */
  sandbox: Sandbox;
  /** The agent CLI probed at start; the SDK runs exactly this one. */
  binary: EngineABinary;
  /** The runtime's tools, as the MCP server `runtime`. */
  tools: TurnToolAccess;
}

/** The agent SDK names an MCP server's tools `mcp__<server>__<tool>`; only these exact names skip the approvals. */
/** How long a failed turn waits for its CLI's exit to be seen (see `exited`). */
const EXIT_WAIT_MS = 1000;
const RUNTIME_CALLS = new Set(RUNTIME_TOOL_NAMES.map((name) => `mcp__${RUNTIME_TOOLS_SERVER}__${name}`));
const isRuntimeCall = (name: string) => RUNTIME_CALLS.has(name);


function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

type Block = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; is_error?: boolean };

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[]).map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

/**
 * One `engine_a` turn: the vendor's agent SDK in streaming-input mode (so `interrupt()`
 * works), resuming the thread's session. Tool permissions go through `canUseTool`, which
 * becomes the runtime's approvals. The agent's process gets the session's access
 * (local-front/bindings/engines/access.ts): a placeholder credential and the credential proxy.
 */
export function runEngineATurn(req: TurnRequest, deps: EngineADeps, emit: (r: EngineReport) => void): EngineTurn {
  const approvals = new Waiting<ApprovalDecision | "expired" | "interrupted">();
  const questions = new Waiting<QuestionReply>();
  const sessions = new SessionStore(deps.stateDir, "engine_a");
  const abort = new AbortController();
  let interrupted = false;
  let interruptAgent: (() => Promise<unknown>) | null = null;
  let finishInput!: () => void;
  let inputOpen = true;
  const inputDone = new Promise<void>((r) => (finishInput = r)).then(() => void (inputOpen = false));
  /** Steering messages for the input stream, and the ones sent that the agent has not folded in yet (by their uuid). */
  const steers: SDKUserMessage[] = [];
  const unfolded = new Map<string, number>();
  let wakeInput: (() => void) | null = null;
  let sessionOf = "";
  let running = false;
  /** The agent CLI's process (the sandbox's outermost one), once the SDK spawned it. */
  let agent: ChildProcess | null = null;
  /** The turn's failure when that process died (killed, or exited with a failure status), or null. */
  const agentDied = () =>
    agent && (agent.signalCode !== null || (agent.exitCode ?? 0) !== 0) ? engineDied("the agent CLI's process", agent.exitCode, agent.signalCode) : null;

  const canUseTool = async (name: string, input: Record<string, unknown>, options: { signal: AbortSignal; toolUseID: string }): Promise<PermissionResult> => {
    if (name === QUESTION_TOOL) {
      const requestId = newId("req_");
      emit({ type: "question", requestId, question: askedQuestion(input) });
      return questionAnswer(input, await questions.wait(requestId, options.signal, { action: "dismiss" }));
    }
    // The runtime's tools act on the runtime only, each as its route would: no person is asked.
    if (req.permissions === "allow" || isRuntimeCall(name)) return { behavior: "allow", updatedInput: input };
    if (req.permissions === "deny") return { behavior: "deny", message: `denied: this thread's permissions are "deny", so ${name} was not run` };
    const approvalId = newId("appr_");
    emit({ type: "approval", approvalId, callId: options.toolUseID, name, input: input as Json });
    const decision = await approvals.wait(approvalId, options.signal, "interrupted");
    if (decision === "allow") return { behavior: "allow", updatedInput: input };
    return { behavior: "deny", message: decision === "interrupted" ? "interrupted" : refusalText(decision, name) };
  };

  /**
   * The CLI runs calls it deems safe (read-only commands such as `echo` or `ls`, file
   * reads) without asking canUseTool. A thread's permissions cover every call, so a hook
   * sends each one to the check: refused at once under `deny`, to a person under `ask`.
   * Questions to the person are not actions; they always go through.
   */
  const everyCall: HookCallback = async (input) => {
    if ("tool_name" in input && (input.tool_name === QUESTION_TOOL || isRuntimeCall(input.tool_name))) return {};
    const deny = req.permissions === "deny";
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: deny ? "deny" : "ask",
        ...(deny ? { permissionDecisionReason: `denied: this thread's permissions are "deny", so it was not run` } : {}),
      },
    };
  };

  /** The account the session runs on, once chosen: the pool hears how the turn ended on it. */
  let account: string | null = null;
  const run = async (): Promise<RunOutcome> => {
    const chosen = await sessionAccess(deps.network, req);
    if ("failure" in chosen) return chosen.failure;
    const { access } = chosen;
    account = access.account;
    const scratch = join(deps.scratchDir, req.threadId);
    const cwd = req.cwd ?? scratch;
    // The CLI's config dir holds its sessions' transcripts: one per thread, so a session sees only its own.
    const configDir = engineHome(deps.stateDir, "engine_a", req.threadId);
    // A thread whose session lived in the shared config dir of earlier builds starts afresh, from the transcript.
    const homeIsNew = !existsSync(configDir);
    const places = { cwd, own: [configDir, ...(req.cwd ? [] : [scratch])], reach: withTools(loopbackReach(access.env, access.baseUrl), deps.tools), ...(req.worktree ? { worktree: req.worktree } : {}) };
    const refused = deps.sandbox.refusalFor(places);
    if (refused) return deps.sandbox.state === "unavailable" ? { class: "engine-unavailable", error: `engine_a is not available: ${refused}` } : { class: "permission", error: refused };
    await mkdir(cwd, { recursive: true });
    await mkdir(configDir, { recursive: true });
    await placeAttachments(cwd, req.inputs);
    // Every model of this engine reads images (the simulator's text-only ones excepted); each attachment is also a file in cwd.
    const images = simulatedImages(req.model) === false ? [] : req.inputs.flatMap(imagesOf);
    // After the runtime reduced the context, the session that outgrew the window is not resumed.
    const saved = homeIsNew || req.freshSession ? null : await sessions.get(req.threadId);
    if (req.compact && !saved) return { class: "session", error: "engine_a has no session of this thread to compact" };
    // The agent's own compaction is its slash command, sent as the session's next prompt.
    const text = req.compact ? "/compact" : (saved ? "" : preamble(req.transcript)) + req.inputs.map((i) => i.text).join("\n\n");
    const contextWindow = windowOf(access.provider, req.model);
    let lastCall = 0;
    let compacted = false;
    sessionOf = saved?.sessionId ?? "";
    async function* prompt(): AsyncGenerator<SDKUserMessage> {
      const content =
        images.length === 0
          ? text
          : [{ type: "text" as const, text }, ...images.map((a) => ({ type: "image" as const, source: { type: "base64" as const, media_type: a.mediaType as "image/png", data: a.base64 } }))];
      yield { type: "user", message: { role: "user", content }, parent_tool_use_id: null, session_id: sessionOf };
      // The input stays open until the turn's result: closing it ends the agent's process.
      // Until then it carries steering messages, which the agent folds into the running turn.
      while (inputOpen) {
        const next = steers.shift();
        if (next) yield next;
        else await Promise.race([inputDone, new Promise<void>((r) => (wakeInput = r))]);
      }
    }
    // The SDK (a large bundle) loads with the first engine_a turn, not with the front.
    const { query } = await import("@anthropic-ai/claude-agent-sdk");
    const q = query({
      prompt: prompt(),
      options: {
        model: req.model,
        cwd,
        ...(deps.binary.binary ? { pathToClaudeCodeExecutable: deps.binary.binary } : {}),
        // Not `dontAsk` under deny: that mode refuses AskUserQuestion before canUseTool, and a
        // question is not an action. The hook refuses every call that is one.
        permissionMode: "default",
        ...(req.permissions === "allow" ? {} : { hooks: { PreToolUse: [{ hooks: [everyCall] }] } }),
        settingSources: [],
        includePartialMessages: true,
        abortController: abort,
        ...(saved ? { resume: saved.sessionId } : {}),
        env: {
          ...childEnv(access.env),
          ANTHROPIC_BASE_URL: access.baseUrl,
          [access.bearer ? "ANTHROPIC_AUTH_TOKEN" : "ANTHROPIC_API_KEY"]: access.apiKey,
          HOME: configDir,
          CLAUDE_CONFIG_DIR: configDir,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          CLAUDE_CODE_MAX_RETRIES: "0",
          // Otherwise the CLI hides MCP tools behind its tool search, and the model sees no runtime tool until it searches.
          ENABLE_TOOL_SEARCH: "false",
          // A command the CLI moves to the background would die with the turn's process, its
          // notice never delivered; and with background tasks on, the CLI refuses a leading
          // `sleep` of 25 s or more outright. Commands run in the foreground, as on the other engines.
          CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: "1",
        },
        canUseTool,
        // The runtime's server, and no other the CLI might find in a config file.
        mcpServers: { [RUNTIME_TOOLS_SERVER]: { type: "http", url: deps.tools.url, headers: { authorization: `Bearer ${deps.tools.token}` } } },
        // Over stdin, not on the CLI's command line: the turn's tool token stays out of every
        // process listing, and the SDK's default (argv, deprecated) would print a raw warning.
        // Needs a CLI at least as new as the SDK's own, which SERVICE_ENGINE_A_BIN must then be.
        mcpServersDelivery: "initialize",
        strictMcpConfig: true,
        // The CLI runs inside the fence; its tools inherit it. Its own sandbox is bubblewrap too, which cannot nest here (docs/credentials.md).
        spawnClaudeCodeProcess: ({ command, args, env, signal }) =>
          (agent = deps.sandbox.spawn([command, ...args], places, { env: definedOnly(env), stdio: ["pipe", "pipe", "ignore"], signal })) as SpawnedProcess,
      },
    });
    interruptAgent = () => q.interrupt();
    running = true;
    if (interrupted) await q.interrupt().catch(() => {});
    const toolNames = new Map<string, string>();
    let sessionId = saved?.sessionId ?? "";
    try {
      for await (const m of q as AsyncIterable<SDKMessage>) {
        if (m.type === "system" && m.subtype === "init") sessionId = m.session_id;
        else if (m.type === "system" && m.subtype === "compact_boundary") {
          const { pre_tokens } = (m as SDKCompactBoundaryMessage).compact_metadata;
          compacted = true;
          emit({ type: "compacted", preTokens: pre_tokens });
        }
        else if (m.type === "stream_event") {
          const e = m.event as { type: string; delta?: { type: string; text?: string } };
          if (e.type === "content_block_delta" && e.delta?.type === "text_delta") emit({ type: "delta", frame: { type: "text", delta: e.delta.text ?? "" } });
        } else if (m.type === "assistant" && m.parent_tool_use_id === null) {
          // The first answer after a steering message was folded in is stamped with its uuid.
          for (const uuid of [m.user_message_uuid, ...(m.user_message_uuids ?? [])])
            if (uuid && unfolded.has(uuid)) (emit({ type: "steered", seq: unfolded.get(uuid)! }), unfolded.delete(uuid));
          if (m.error) continue;
          const used = m.message.usage as { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number } | undefined;
          if (used) lastCall = (used.input_tokens ?? 0) + (used.cache_read_input_tokens ?? 0) + (used.cache_creation_input_tokens ?? 0) + (used.output_tokens ?? 0);
          const blocks = m.message.content as Block[];
          const reply = blocks.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
          if (reply) emit({ type: "reply", text: reply });
          for (const b of blocks)
            if (b.type === "tool_use" && b.id && b.name) {
              toolNames.set(b.id, b.name);
              emit({ type: "tool-call", callId: b.id, name: b.name, input: (b.input ?? {}) as Json });
            }
        } else if (m.type === "user" && m.parent_tool_use_id === null && Array.isArray(m.message.content)) {
          for (const b of m.message.content as Block[])
            if (b.type === "tool_result" && b.tool_use_id)
              emit({
                type: "tool-result",
                callId: b.tool_use_id,
                name: toolNames.get(b.tool_use_id) ?? "unknown",
                output: textOf(b.content),
                isError: b.is_error === true,
              });
        } else if (m.type === "result") {
          running = false;
          const grew = Math.max(0, m.total_cost_usd - (saved?.costUsd ?? 0));
          if (sessionId) await sessions.put(req.threadId, { sessionId, costUsd: Math.max(m.total_cost_usd, saved?.costUsd ?? 0) });
          const usage = m.usage as { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
          const inputTokens = (usage.input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
          if (inputTokens + (usage.output_tokens ?? 0) > 0 || grew > 0)
            emit({
              type: "usage",
              model: req.model,
              inputTokens,
              outputTokens: usage.output_tokens ?? 0,
              usd: grew,
              ...(lastCall > 0 ? { contextTokens: lastCall } : {}),
              ...(contextWindow ? { contextWindow } : {}),
            });
          if (interrupted) return INTERRUPTED;
          const message = "result" in m && typeof m.result === "string" ? m.result : ("errors" in m ? (m.errors as string[]).join("; ") : m.subtype);
          // `/compact` ends with a result whether or not it compacted: only its boundary says it did.
          if (req.compact && !compacted) return { class: "session", error: `the agent did not compact its session: ${message || "no reason given"}` };
          if (!m.is_error) return m.stop_reason === "max_tokens" ? { stop: "length" } : null;
          const status = "api_error_status" in m && typeof m.api_error_status === "number" ? m.api_error_status : null;
          return classifyProviderError(status, message);
        }
      }
    } finally {
      finishInput();
    }
    if (interrupted) return INTERRUPTED;
    return agentDied() ?? { class: "session", error: "the agent ended without a result" };
  };

  /**
   * The SDK can fail on the pipe (EPIPE, a closed stdout) before Node has seen its CLI's
   * exit: waiting a moment for it lets the death be told as one, not as a crash.
   */
  const exited = async (): Promise<void> => {
    if (!agent || agent.exitCode !== null || agent.signalCode !== null) return;
    await Promise.race([once(agent, "exit"), new Promise((r) => setTimeout(r, EXIT_WAIT_MS))]);
  };
  // The SDK throws once the CLI's process is gone; that process's end says why the turn did.
  const ran = tellPool(deps.network, req, () => account, run()).catch(async (err: unknown) => {
    await exited();
    throw err;
  });
  const done = reportEnd(ran, emit, (err) =>
    interrupted ? INTERRUPTED : (agentDied() ?? { class: "unknown", error: `engine_a crashed: ${err.message}` }),
  );

  return {
    done,
    decide: (approvalId, decision) => approvals.settle(approvalId, decision),
    reply: (requestId, answer) => questions.settle(requestId, answer),
    steer: async ({ seq, text }) => {
      if (!running || interrupted || !inputOpen) return false;
      const uuid = crypto.randomUUID();
      unfolded.set(uuid, seq);
      steers.push({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: sessionOf, uuid, priority: "next" });
      wakeInput?.();
      return true;
    },
    interrupt() {
      interrupted = true;
      approvals.settleAll("interrupted");
      questions.settleAll({ action: "dismiss" });
      if (interruptAgent) void interruptAgent().catch(() => abort.abort());
    },
  };
}
