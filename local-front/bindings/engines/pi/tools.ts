import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema, Type as TypeBuilder } from "@mariozechner/pi-ai";
import { capToolOutput } from "../../../../src/rules/tool-output.js";
import type { Sandbox, SessionPlaces } from "../../sandbox/fence.js";
import type { RuntimeToolName } from "../../../../src/api/tools.js";
import { describeTool, runRuntimeTool, toolSchema, type RuntimeLink, type ToolScope } from "../tools/runtime-tools.js";

/**
 * A command's output beyond this is not even read: it guards the front's memory. What
 * reaches the model and the log is cut shorter, by the one rule every engine's results
 * meet where the Thread records them (src/rules/tool-output.ts).
 */
const READ_LIMIT = 4 * 1024 * 1024;
const SHELL_TIMEOUT_S = 120;
const SHELL_TIMEOUT_MAX_S = 3600;

/**
 * What a command sees of the front's environment: enough to run tools, and none of the
 * front's own secrets (provider keys live in the front's environment, and a model that
 * runs `env` would write them into the log).
 */
const PASSED_ENV = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL", "TZ"];

/** The session's proxy and CA-trust variables join them, so commands go out the way the session's model calls do. */
function toolEnv(session: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  return { ...env, ...session };
}

export interface QuestionAnswer {
  action: "answer" | "dismiss" | "continue";
  answer?: string;
}

export interface ToolContext {
  /** The thread whose session this is: its commands run in one kept sandbox (bindings/sandbox/session-sandbox.ts). */
  owner: string;
  /** The session's working directory, and its own directories the fence lets it write. */
  places: SessionPlaces;
  /** Every command and file access of a tool runs through it. */
  sandbox: Sandbox;
  /** The session's network variables (proxy, CA trust). */
  env: Record<string, string>;
  /** Asks the person; resolves with their answer, dismissal or "continue without". */
  ask(question: string, signal: AbortSignal | undefined): Promise<QuestionAnswer>;
  /** The runtime's tools this turn is offered, called in process (docs/tools.md). */
  runtime: { scope: ToolScope; link: RuntimeLink };
}

function text(t: string, terminate = false): AgentToolResult<null> {
  return { content: [{ type: "text", text: t }], details: null, ...(terminate ? { terminate } : {}) };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr together, or stdout alone when asked to keep them apart. */
  output: Buffer;
  /** Its size before the cap. */
  size: number;
  stderr: string;
}

/**
 * Runs `argv` inside the session's fence (feeding it `input`), keeping its output up to
 * `limit` bytes; on abort or timeout the command and all it started die with the sandbox.
 * A sandbox that cannot run refuses here, so nothing runs unfenced: its refusal rejects the
 * run, and pi-agent-core reports the tool's throw as a failed result (`isError`), never as
 * the command's output.
 */
function runFenced(ctx: ToolContext, argv: string[], o: { timeoutS: number; signal?: AbortSignal; input?: string; limit: number; apart?: boolean }): Promise<Run> {
  return new Promise((done, fail) => {
    const child = ctx.sandbox.run(ctx.owner, argv, ctx.places, { env: toolEnv(ctx.env), input: o.input !== undefined });
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    let size = 0;
    const take = (b: Buffer) => {
      if (size <= o.limit) chunks.push(b);
      size += b.length;
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", o.apart ? (b: Buffer) => errors.push(b) : take);
    if (o.input !== undefined) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(o.input);
    }
    const kill = () => child.stop();
    const timer = setTimeout(kill, o.timeoutS * 1000);
    o.signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", kill);
      if (o.signal?.aborted) return fail(new Error("aborted"));
      done({ code, signal, output: Buffer.concat(chunks), size, stderr: Buffer.concat(errors).toString() });
    });
  });
}

async function shell(ctx: ToolContext, command: string, timeoutS: number, signal?: AbortSignal): Promise<{ code: number | null; output: string }> {
  const run = await runFenced(ctx, ["bash", "-c", command], { timeoutS, signal, limit: READ_LIMIT });
  const output = capToolOutput(run.output.toString());
  return { code: run.signal ? null : run.code, output: run.signal ? `${output}\n[killed by ${run.signal} after ${timeoutS}s]` : output };
}

/** A file tool's step, fenced like the shell, so it reaches exactly what a command would. */
async function fileStep(ctx: ToolContext, argv: string[], signal?: AbortSignal, input?: string): Promise<string> {
  const run = await runFenced(ctx, argv, { timeoutS: SHELL_TIMEOUT_S, signal, input, limit: Infinity, apart: true });
  if (run.code !== 0) throw new Error(run.stderr.trim() || `${argv[0]} ended with ${run.signal ?? `exit code ${run.code}`}`);
  return run.output.toString();
}

const readText = (ctx: ToolContext, path: string, signal?: AbortSignal) => fileStep(ctx, ["cat", "--", path], signal);
const writeText = (ctx: ToolContext, path: string, content: string, signal?: AbortSignal) =>
  fileStep(ctx, ["sh", "-c", 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"', "write_file", path], signal, content);

/** Checks one tool against its own schema; the list holds tools of different schemas. */
function tool<T extends TSchema>(t: AgentTool<T>): AgentTool {
  return t as unknown as AgentTool;
}

/**
 * The `pi` engine's tools. Paths are relative to the thread's cwd; like a person's shell,
 * they are not confined to it: the thread's permissions (`ask` by default) are the gate,
 * and the sandbox (local-front/bindings/sandbox/fence.ts) hides the host's secrets from all of them.
 */
export function piTools(Type: typeof TypeBuilder, ctx: ToolContext): AgentTool[] {
  return [
    tool({
      name: "shell",
      label: "Shell",
      description: "Run a bash command in the working directory. Returns its exit code and combined output.",
      parameters: Type.Object({
        command: Type.String({ description: "The bash command" }),
        timeoutSeconds: Type.Optional(Type.Number({ description: `Default ${SHELL_TIMEOUT_S}` })),
      }),
      execute: async (_id, params, signal) => {
        const timeout = Math.min(Math.max(params.timeoutSeconds ?? SHELL_TIMEOUT_S, 1), SHELL_TIMEOUT_MAX_S);
        const { code, output } = await shell(ctx, params.command, timeout, signal);
        const report = `exit code ${code ?? "none"}\n${output}`;
        if (code !== 0) throw new Error(report);
        return text(report);
      },
    }),
    tool({
      name: "read_file",
      label: "Read file",
      description: "Read a text file.",
      parameters: Type.Object({ path: Type.String() }),
      execute: async (_id, params, signal) => text(capToolOutput(await readText(ctx, params.path, signal))),
    }),
    tool({
      name: "write_file",
      label: "Write file",
      description: "Create or replace a text file with the given content.",
      parameters: Type.Object({ path: Type.String(), content: Type.String() }),
      execute: async (_id, params, signal) => {
        await writeText(ctx, params.path, params.content, signal);
        return text(`wrote ${Buffer.byteLength(params.content)} bytes to ${params.path}`);
      },
    }),
    tool({
      name: "edit_file",
      label: "Edit file",
      description: "Replace exactly one occurrence of oldText with newText in a file.",
      parameters: Type.Object({ path: Type.String(), oldText: Type.String(), newText: Type.String() }),
      execute: async (_id, params, signal) => {
        const before = await readText(ctx, params.path, signal);
        const count = before.split(params.oldText).length - 1;
        if (count !== 1) throw new Error(`oldText occurs ${count} times in ${params.path}; it must occur exactly once`);
        await writeText(ctx, params.path, before.replace(params.oldText, () => params.newText), signal);
        return text(`edited ${params.path}`);
      },
    }),
    tool({
      name: "ask_user",
      label: "Ask the user",
      description: "Ask the person a question and wait for the answer.",
      parameters: Type.Object({ question: Type.String() }),
      execute: async (_id, params, signal) => {
        const reply = await ctx.ask(params.question, signal);
        if (reply.action === "answer") return text(reply.answer ?? "");
        if (reply.action === "continue") return text("(the user chose to continue without answering; proceed with your best judgment)");
        return text("(the user dismissed the question)", true);
      },
    }),
    ...ctx.runtime.scope.tools.map((name) => runtimeTool(Type, name, ctx.runtime)),
  ];
}

/** One of the runtime's tools: the same schema, description and call as engine_a's and engine_b's MCP server's. */
function runtimeTool(Type: typeof TypeBuilder, name: RuntimeToolName, runtime: ToolContext["runtime"]): AgentTool {
  return tool({
    name,
    label: name.replace(/_/g, " "),
    description: describeTool(name, runtime.scope),
    parameters: Type.Unsafe(toolSchema(name)),
    execute: async (_id, params, signal) => {
      const r = await runRuntimeTool(runtime.link, runtime.scope, name, params, signal);
      // pi-agent-core makes a thrown error the call's error result.
      if (r.isError) throw new Error(r.text);
      return text(r.text);
    },
  });
}
