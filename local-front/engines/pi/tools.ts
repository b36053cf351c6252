import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import { Type, type TSchema } from "@mariozechner/pi-ai";
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/** Tool output beyond this is cut: it goes to the model and into the log. */
export const OUTPUT_CAP = 256 * 1024;
const SHELL_TIMEOUT_S = 120;
const SHELL_TIMEOUT_MAX_S = 3600;

/**
 * What a command sees of the front's environment: enough to run tools, and none of the
 * front's own secrets (provider keys live in the front's environment, and a model that
 * runs `env` would write them into the log).
 */
const PASSED_ENV = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL", "TZ"];

/** The session's proxy and CA-trust variables join them, so commands go out the way the session's model calls do. */
function toolEnv(session: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...session };
}

export interface QuestionAnswer {
  action: "answer" | "dismiss" | "continue";
  answer?: string;
}

export interface ToolContext {
  cwd: string;
  /** The session's network variables (proxy, CA trust). */
  env: Record<string, string>;
  /** Asks the person; resolves with their answer, dismissal or "continue without". */
  ask(question: string, signal: AbortSignal | undefined): Promise<QuestionAnswer>;
}

function text(t: string, terminate = false): AgentToolResult<null> {
  return { content: [{ type: "text", text: t }], details: null, ...(terminate ? { terminate } : {}) };
}

function cap(out: string): string {
  if (Buffer.byteLength(out) <= OUTPUT_CAP) return out;
  const cut = Buffer.from(out).subarray(0, OUTPUT_CAP).toString();
  return `${cut}\n[output cut at ${OUTPUT_CAP} bytes of ${Buffer.byteLength(out)}]`;
}

/** Runs `command` with bash in `cwd`; the whole process group dies on abort or timeout. */
function runShell(command: string, cwd: string, env: Record<string, string>, timeoutS: number, signal?: AbortSignal): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", command], { cwd, env: toolEnv(env), detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (b: Buffer) => {
      if (size <= OUTPUT_CAP) chunks.push(b);
      size += b.length;
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(kill, timeoutS * 1000);
    signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", kill);
      if (signal?.aborted) return fail(new Error("aborted"));
      const output = cap(Buffer.concat(chunks).toString());
      done({ code: sig ? null : code, output: sig ? `${output}\n[killed by ${sig} after ${timeoutS}s]` : output });
    });
  });
}

/** Checks one tool against its own schema; the list holds tools of different schemas. */
function tool<T extends TSchema>(t: AgentTool<T>): AgentTool {
  return t as unknown as AgentTool;
}

/**
 * The `pi` engine's tools. Paths are relative to the thread's cwd; like a person's shell,
 * they are not confined to it: the thread's permissions (`ask` by default) are the gate.
 */
export function piTools(ctx: ToolContext): AgentTool[] {
  const at = (path: string) => resolve(ctx.cwd, path);
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
        const { code, output } = await runShell(params.command, ctx.cwd, ctx.env, timeout, signal);
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
      execute: async (_id, params) => text(cap(await readFile(at(params.path), "utf8"))),
    }),
    tool({
      name: "write_file",
      label: "Write file",
      description: "Create or replace a text file with the given content.",
      parameters: Type.Object({ path: Type.String(), content: Type.String() }),
      execute: async (_id, params) => {
        await mkdir(dirname(at(params.path)), { recursive: true });
        await writeFile(at(params.path), params.content);
        return text(`wrote ${Buffer.byteLength(params.content)} bytes to ${params.path}`);
      },
    }),
    tool({
      name: "edit_file",
      label: "Edit file",
      description: "Replace exactly one occurrence of oldText with newText in a file.",
      parameters: Type.Object({ path: Type.String(), oldText: Type.String(), newText: Type.String() }),
      execute: async (_id, params) => {
        const before = await readFile(at(params.path), "utf8");
        const count = before.split(params.oldText).length - 1;
        if (count !== 1) throw new Error(`oldText occurs ${count} times in ${params.path}; it must occur exactly once`);
        await writeFile(at(params.path), before.replace(params.oldText, () => params.newText));
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
  ];
}
