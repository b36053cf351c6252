import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ApprovalDecision, EngineReport, Json, SteerRequest, QuestionReply, TurnRequest } from "../../../../src/api/engine.js";
import { newId } from "../../../../src/shared/ids.js";
import { imagesOf, placeAttachments } from "../attachments.js";
import { simulatedImages } from "../../../../src/api/simulated-models.js";
import type { Sandbox } from "../../sandbox/fence.js";
import { loopbackReach } from "../../sandbox/loopback-bridge.js";
import { RUNTIME_TOOLS_SERVER } from "../../../../src/api/tools.js";
import { withTools, type TurnToolAccess } from "../tools/runtime-tools.js";
import { sessionAccess, tellPool, type NetworkDeps } from "../access.js";
import { engineHome, SessionStore } from "../sessions.js";
import { childEnv } from "../child-env.js";
import { preamble } from "../preamble.js";
import { priceOf, usdOf } from "../prices.js";
import { windowOf } from "../providers.js";
import { engineDied, INTERRUPTED, reportEnd, Waiting, type EngineTurn, type RunOutcome } from "../turn.js";
import type { EngineBinary } from "./binary.js";
import { codexTurnEnd } from "./failure.js";
import { placeExecRules } from "./exec-rules.js";
import { askedQuestion, userInputResponse } from "./questions.js";
import { AppServerRpc, RpcError } from "./rpc.js";
import type { ServerNotification, ServerRequest, ThreadItem, TurnError } from "./types.js";

export interface EngineBDeps {
  network: NetworkDeps;
  stateDir: string;
  scratchDir: string;
  binary: EngineBinary;
  /** The codex process, and so every command it runs, lives inside it. */
  sandbox: Sandbox;
  /** The runtime's tools, as the MCP server `runtime`. */
  tools: TurnToolAccess;
}

/** An MCP result's text parts, as the log records a tool's output. */
function mcpText(content: unknown[] | undefined): string {
  return (content ?? []).map((c) => (c && typeof c === "object" && "text" in c && typeof c.text === "string" ? c.text : "")).join("");
}

/**
 * permissions -> codex's approval policy. `untrusted` asks for every command but those
 * codex judges safe, and the exec-policy rules written into the thread's CODEX_HOME
 * (exec-rules.ts) make those ask too. Under `deny` every request is answered no. codex's own
 * sandbox stays off: the whole app-server runs inside the runtime's (docs/credentials.md),
 * and codex's is bubblewrap around a helper of its own that the fence does not hold, so a
 * command run in it fails to start ("execvp codex-linux-sandbox") whenever codex tries it.
 */
function policy(permissions: TurnRequest["permissions"]): { approvalPolicy: "untrusted" | "never"; sandbox: "danger-full-access" } {
  return { approvalPolicy: permissions === "allow" ? "never" : "untrusted", sandbox: "danger-full-access" };
}

/**
 * One `engine_b` turn: a `codex app-server` process for the turn, which starts the
 * thread's codex thread or resumes it (`thread/resume`, by the id kept in the engine
 * state), runs `turn/start`, and maps items to the log and approval requests to the
 * runtime's approvals. The process ends with the turn.
 */
export function runEngineBTurn(req: TurnRequest, deps: EngineBDeps, emit: (r: EngineReport) => void): EngineTurn {
  const approvals = new Waiting<ApprovalDecision | "expired" | "interrupted">();
  const questions = new Waiting<QuestionReply | "interrupted">();
  const sessions = new SessionStore(deps.stateDir, "engine_b");
  let interrupted = false;
  let stop: (() => void) | null = null;
  /** Set while codex runs the turn: `turn/steer` adds input to it. */
  let steerNow: ((m: SteerRequest) => Promise<boolean>) | null = null;

  /** The account the session runs on, once chosen: the pool hears how the turn ended on it. */
  let account: string | null = null;
  const run = async (): Promise<RunOutcome> => {
    const binary = deps.binary;
    if (!binary.available || !binary.binary) return { class: "engine-unavailable", error: binary.reason ?? "engine_b is not available" };
    const chosen = await sessionAccess(deps.network, req);
    if ("failure" in chosen) return chosen.failure;
    const { access } = chosen;
    account = access.account;
    // CODEX_HOME holds codex's sessions: one per thread, so a session sees only its own.
    const home = engineHome(deps.stateDir, "engine_b", req.threadId);
    // A thread whose codex thread lived in the shared home of earlier builds starts afresh, from the transcript.
    const homeIsNew = !existsSync(home);
    const scratch = join(deps.scratchDir, req.threadId);
    const cwd = req.cwd ?? scratch;
    const places = { cwd, own: [home, ...(req.cwd ? [] : [scratch])], reach: withTools(loopbackReach(access.env, access.baseUrl), deps.tools), ...(req.worktree ? { worktree: req.worktree } : {}) };
    const refused = deps.sandbox.refusalFor(places);
    if (refused) return deps.sandbox.state === "unavailable" ? { class: "engine-unavailable", error: `engine_b is not available: ${refused}` } : { class: "permission", error: refused };
    await mkdir(home, { recursive: true });
    await placeExecRules(home, req.permissions);
    await mkdir(cwd, { recursive: true });
    await placeAttachments(cwd, req.inputs);
    const env: Record<string, string> = { ...childEnv(access.env), CODEX_HOME: home, HOME: home, ENGINE_B_API_KEY: access.apiKey };
    const child = deps.sandbox.spawn(
      [
        binary.binary,
        "app-server",
        "-c",
        'model_provider="runtime"',
        "-c",
        `model_providers.runtime={name="runtime", base_url=${JSON.stringify(access.baseUrl)}, wire_api="responses", env_key="ENGINE_B_API_KEY", request_max_retries=0, stream_max_retries=0}`,
        "-c",
        "include_environment_context=false",
        "-c",
        // Required: codex waits only a second for an optional server's tools before the turn's
        // first model call, and on a loaded machine the runtime's tools (memory, delegation,
        // code reads) were then silently left out of the turn. A required server is waited
        // for up to its start timeout, and one that cannot start fails the turn, saying so.
        `mcp_servers.${RUNTIME_TOOLS_SERVER}={url=${JSON.stringify(deps.tools.url)}, http_headers={authorization=${JSON.stringify(`Bearer ${deps.tools.token}`)}}, default_tools_approval_mode="approve", required=true, startup_timeout_sec=30}`,
        // codex compacts its thread on its own at the runtime's warning line (it takes an unknown model's window for a large one).
        ...(req.window ? ["-c", `model_context_window=${req.window.tokens}`, "-c", `model_auto_compact_token_limit=${req.window.compactAt}`] : []),
        // Without these it reaches for outside hosts, and retries an unreachable provider forever.
        "--disable",
        "plugins",
        "--disable",
        "apps",
        "--disable",
        "remote_plugin",
        "--disable",
        "unbounded_connection_retries",
        // request_user_input answers only in Plan mode otherwise; the runtime's questions are for every turn.
        "--enable",
        "default_mode_request_user_input",
      ],
      places,
      { env, stdio: ["pipe", "pipe", "pipe"] },
    ) as ChildProcessWithoutNullStreams;
    child.stderr.resume();
    // Interrupted before the turn started (a slow start, or the report stream went away):
    // nothing to ask codex to stop yet, so the process goes.
    stop = () => child.kill("SIGKILL");
    if (interrupted) stop();
    let settleTurn!: (f: RunOutcome) => void;
    const turnEnded = new Promise<RunOutcome>((r) => (settleTurn = r));
    let lastError: TurnError | null = null;
    const usage = { input: 0, cached: 0, output: 0, lastCall: 0, window: null as number | null };

    const item = (phase: "started" | "completed", it: ThreadItem) => {
      // A steering message shows as a user message item, named by the id the runtime gave it, once codex took it in.
      const steered = it.type === "userMessage" && phase === "completed" ? /^steer-(\d+)$/.exec(it.clientId ?? "") : null;
      if (steered) emit({ type: "steered", seq: Number(steered[1]) });
      else if (it.type === "contextCompaction" && phase === "completed") emit({ type: "compacted" });
      else if (it.type === "agentMessage" && phase === "completed" && it.text) emit({ type: "reply", text: it.text });
      else if (it.type === "commandExecution") {
        if (phase === "started") emit({ type: "tool-call", callId: it.id, name: "exec_command", input: { command: it.command } });
        else
          emit({
            type: "tool-result",
            callId: it.id,
            name: "exec_command",
            output: it.aggregatedOutput ?? (it.status === "declined" ? "declined" : ""),
            isError: it.status !== "completed" || (it.exitCode ?? 0) !== 0,
          });
      } else if (it.type === "mcpToolCall") {
        const name = `mcp__${it.server}__${it.tool}`;
        if (phase === "started") emit({ type: "tool-call", callId: it.id, name, input: (it.arguments ?? {}) as Json });
        else emit({ type: "tool-result", callId: it.id, name, output: it.error?.message ?? mcpText(it.result?.content), isError: it.status !== "completed" || it.error !== null });
      } else if (it.type === "fileChange") {
        const paths = it.changes.map((c) => c.path);
        if (phase === "started") emit({ type: "tool-call", callId: it.id, name: "apply_patch", input: { paths } });
        else emit({ type: "tool-result", callId: it.id, name: "apply_patch", output: `${it.status}: ${paths.join(", ")}`, isError: it.status !== "completed" });
      }
    };

    const notified = (n: ServerNotification) => {
      switch (n.method) {
        case "item/agentMessage/delta":
          return emit({ type: "delta", frame: { type: "text", delta: n.params.delta } });
        case "item/started":
          return item("started", n.params.item);
        case "item/completed":
          return item("completed", n.params.item);
        case "thread/tokenUsage/updated": {
          const { last, modelContextWindow } = n.params.tokenUsage;
          usage.input += last.inputTokens;
          usage.cached += last.cachedInputTokens;
          usage.output += last.outputTokens;
          usage.lastCall = last.inputTokens + last.outputTokens;
          usage.window = modelContextWindow;
          return;
        }
        case "error":
          if (!n.params.willRetry) lastError = n.params.error;
          return;
        case "turn/completed": {
          const { turn } = n.params;
          if (turn.status === "completed") settleTurn(null);
          else if (turn.status === "interrupted" || interrupted) settleTurn(INTERRUPTED);
          else settleTurn(codexTurnEnd(turn.error ?? lastError));
          return;
        }
      }
    };
    const reportUsage = () => {
      if (usage.input + usage.output === 0) return;
      // codex counts cached input inside its input tokens, as OpenAI does; the cache reads are priced apart.
      const tokens = { input: usage.input - usage.cached, cacheRead: usage.cached, output: usage.output };
      const contextWindow = windowOf(access.provider, req.model) ?? usage.window ?? undefined;
      emit({
        type: "usage",
        model: req.model,
        inputTokens: usage.input,
        outputTokens: usage.output,
        usd: usdOf(priceOf(access.provider, req.model), tokens),
        contextTokens: usage.lastCall,
        ...(contextWindow ? { contextWindow } : {}),
      });
    };
    const rpc = new AppServerRpc(child, notified, (r) => void answerRequest(r));
    child.on("exit", (code, signal) => settleTurn(interrupted ? INTERRUPTED : engineDied("codex app-server", code, signal)));
    child.on("error", (err) => settleTurn(interrupted ? INTERRUPTED : { class: "session", error: `codex app-server could not run: ${err.message}` }));

    const answerRequest = async (r: ServerRequest) => {
      if (r.method === "item/tool/requestUserInput") {
        const requestId = newId("req_");
        emit({ type: "question", requestId, question: askedQuestion(r.params) });
        const reply = await questions.wait(requestId);
        // An interrupted turn's pending request is resolved by codex itself: no answer.
        if (reply !== "interrupted") rpc.respond(r, userInputResponse(r.params, reply));
        return;
      }
      if (r.method !== "item/commandExecution/requestApproval" && r.method !== "item/fileChange/requestApproval") return rpc.refuse(r, `${r.method} is not supported by this runtime`);
      if (req.permissions === "deny") return rpc.respond(r, { decision: "decline" });
      const approvalId = newId("appr_");
      const asked =
        r.method === "item/commandExecution/requestApproval"
          ? { name: "exec_command", input: { command: r.params.command ?? null, cwd: r.params.cwd ?? null } }
          : { name: "apply_patch", input: { command: null, cwd: null } };
      emit({ type: "approval", approvalId, callId: r.params.itemId, ...asked });
      const decision = await approvals.wait(approvalId);
      // An interrupted turn's pending request is resolved by codex itself: no answer.
      if (decision !== "interrupted") rpc.respond(r, { decision: decision === "allow" ? "accept" : "decline" });
    };

    try {
      await rpc.request("initialize", { clientInfo: { name: "agent_runtime", title: "Agent Runtime", version: "0.1.0" }, capabilities: { experimentalApi: false, requestAttestation: false } });
      rpc.notify({ method: "initialized" });
      // After the runtime reduced the context, the codex thread that outgrew the window is not resumed.
      const saved = homeIsNew || req.freshSession ? null : await sessions.get(req.threadId);
      const { approvalPolicy, sandbox } = policy(req.permissions);
      let resumedId: string | null = null;
      if (saved) {
        try {
          resumedId = (await rpc.request("thread/resume", { threadId: saved.sessionId, excludeTurns: true, model: req.model, cwd, approvalPolicy, sandbox })).thread.id;
        } catch (err) {
          if (!(err instanceof RpcError)) throw err;
        }
      }
      if (req.compact) {
        if (resumedId === null) return { class: "session", error: "engine_b has no session of this thread to compact" };
        await rpc.request("thread/compact/start", { threadId: resumedId });
        const failure = await turnEnded;
        reportUsage();
        return failure;
      }
      const fresh = resumedId === null;
      const threadId = resumedId ?? (await rpc.request("thread/start", { model: req.model, cwd, approvalPolicy, sandbox })).thread.id;
      if (fresh) await sessions.put(req.threadId, { sessionId: threadId, costUsd: 0 });
      const text = (fresh ? preamble(req.transcript) : "") + req.inputs.map((i) => i.text).join("\n\n");
      // Images go to a model that reads them, from the files placed in cwd.
      const images = simulatedImages(req.model) === false ? [] : req.inputs.flatMap(imagesOf);
      const started = await rpc.request("turn/start", {
        threadId,
        input: [{ type: "text", text, text_elements: [] }, ...images.map((a) => ({ type: "localImage" as const, path: join(cwd, a.path) }))],
      });
      stop = () => void rpc.request("turn/interrupt", { threadId, turnId: started.turn.id }).catch(() => child.kill("SIGKILL"));
      if (interrupted) stop();
      steerNow = ({ seq, text }) =>
        rpc.request("turn/steer", { threadId, expectedTurnId: started.turn.id, clientUserMessageId: `steer-${seq}`, input: [{ type: "text", text, text_elements: [] }] }).then(
          () => true,
          () => false,
        );
      const failure = await turnEnded;
      steerNow = null;
      reportUsage();
      return failure;
    } finally {
      child.stdin.end();
      setTimeout(() => child.kill("SIGKILL"), 2000).unref();
    }
  };

  const done = reportEnd(tellPool(deps.network, req, () => account, run()), emit, (err) =>
    interrupted ? INTERRUPTED : { class: "session", error: `engine_b: ${err.message}` },
  );

  return {
    done,
    decide: (approvalId, decision) => approvals.settle(approvalId, decision),
    reply: (requestId, answer) => questions.settle(requestId, answer),
    steer: (m) => (steerNow && !interrupted ? steerNow(m) : Promise.resolve(false)),
    interrupt() {
      interrupted = true;
      approvals.settleAll("interrupted");
      questions.settleAll("interrupted");
      stop?.();
    },
  };
}
