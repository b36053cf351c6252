import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEngineB } from "../../local-front/bindings/engines/engine-b/binary.js";
import { PROMPTED_PROGRAMS } from "../../local-front/bindings/engines/engine-b/exec-rules.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor, type LoggedEvent } from "../support/http.js";

/**
 * `ask` and `deny` hold for every command on every engine, read-only ones included: each
 * command leaves a trace when it runs (a file's content or a directory's listing in what
 * the model is told, or a marker file), and the test looks for the trace, not for an error.
 */
let front: Front;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-permission-commands-"));
const rand = Math.random().toString(36).slice(2, 10);
/** In secret.txt: what `cat` shows. */
const content = `tok${rand}content`;
/** An untracked file's name: what `ls` and `git status` show. */
const listed = `listed${rand}file`;

beforeAll(async () => {
  writeFileSync(join(work, "secret.txt"), `${content}\n`);
  writeFileSync(join(work, listed), "");
  execFileSync("git", ["init", "-q"], { cwd: work });
  front = await startFront();
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

interface Run {
  threadId: string;
  asked: number;
  events: LoggedEvent[];
  /** Whether the command's trace shows: the content or listing in the log, or the marker file. */
  ran: boolean;
}

let runs = 0;

/** One turn making `tool`'s call; under `ask` each approval it opens is answered `decision`. */
async function run(spec: Record<string, unknown>, tool: Record<string, unknown>, decision: "allow" | "deny" = "deny", marker?: string): Promise<Run> {
  const { threadId } = (await call(front.url, "POST", "/spawn", { cwd: work, ...spec })).body;
  await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool }) });
  const answered = new Set<string>();
  await waitFor(async () => {
    const turn = (await call(front.url, "GET", `/threads/${threadId}/turn`)).body;
    for (const id of turn.waitingOn.approvals as string[])
      if (!answered.has(id)) (answered.add(id), await call(front.url, "POST", `/threads/${threadId}/approvals/${id}`, { decision }));
    const log = await events(front.url, threadId);
    return log.some((e) => e.kind === "turn-ended" || e.kind === "turn-failed");
  }, 60_000);
  const log = await events(front.url, threadId);
  const text = JSON.stringify(log);
  runs++;
  return { threadId, asked: log.filter((e) => e.kind === "approval-request").length, events: log, ran: text.includes(content) || text.includes(listed) || (marker !== undefined && existsSync(join(work, marker))) };
}

const marker = () => `marker-${rand}-${runs}`;

/** Command shapes models make on codex: its unified exec with and without a login shell, a pipeline, read-only commands. */
const CODEX_SHAPES: [string, (m: string) => Record<string, unknown>][] = [
  ["exec_command cat, login false", () => ({ name: "exec_command", input: { cmd: "cat secret.txt", login: false } })],
  ["exec_command cat, login true", () => ({ name: "exec_command", input: { cmd: "cat secret.txt", login: true } })],
  ["exec_command, a pipeline", () => ({ name: "exec_command", input: { cmd: "cat secret.txt | grep tok", login: false } })],
  ["exec_command ls", () => ({ name: "exec_command", input: { cmd: "ls" } })],
  ["exec_command /bin/ls by its path", () => ({ name: "exec_command", input: { cmd: "/bin/ls", login: false } })],
  ["exec_command git status", () => ({ name: "exec_command", input: { cmd: "git status", login: false } })],
  ["exec_command, a read and a write", (m) => ({ name: "exec_command", input: { cmd: `cat secret.txt; touch ${m}`, login: false } })],
];

const ENGINE_B = { engine: "engine_b", model: "gpt-sim" };

describe("engine_b (codex 0.160.0): every command under ask and deny", () => {
  it.each(CODEX_SHAPES)("%s: asks first; denied it does not run, approved it does", async (_shape, tool) => {
    const denied = marker();
    const no = await run({ ...ENGINE_B, permissions: "ask" }, tool(denied), "deny", denied);
    expect(no.asked, JSON.stringify(no.events.map((e) => [e.kind, e.body]))).toBe(1);
    expect(no.ran).toBe(false);
    const allowed = marker();
    const yes = await run({ ...ENGINE_B, permissions: "ask" }, tool(allowed), "allow", allowed);
    expect(yes.asked).toBe(1);
    expect(yes.ran, JSON.stringify(yes.events.map((e) => [e.kind, e.body]))).toBe(true);
  });

  it.each(CODEX_SHAPES)("%s: under deny, asks nobody and does not run", async (_shape, tool) => {
    const m = marker();
    const r = await run({ ...ENGINE_B, permissions: "deny" }, tool(m), "allow", m);
    expect(r.asked).toBe(0);
    expect(r.ran, JSON.stringify(r.events.map((e) => [e.kind, e.body]))).toBe(false);
    expect(r.events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ isError: true });
  });

  it("runs nothing for the shell tool's argv shape, which 0.160.0 does not offer", async () => {
    for (const permissions of ["ask", "deny"]) {
      const r = await run({ ...ENGINE_B, permissions }, { name: "shell", unoffered: true, input: { command: ["cat", "secret.txt"] } }, "allow");
      expect(r.asked).toBe(0);
      expect(r.ran).toBe(false);
      expect(r.events.find((e) => e.kind === "reply")?.body.text).toContain("unsupported call: shell");
    }
  });

  it("leaves codex no command it judges safe to run on its own: its rules prompt for each, by name or path", async () => {
    const r = await run({ ...ENGINE_B, permissions: "ask" }, { name: "exec_command", input: { cmd: "true" } });
    const rules = join(front.dataDir, "engine", "engine_b", "homes", r.threadId, "rules", "runtime.rules");
    expect(existsSync(rules), `no rules at ${rules}`).toBe(true);
    const codex = (await findEngineB(undefined)).binary!;
    for (const program of PROMPTED_PROGRAMS)
      for (const argv of [[program, "x"], [`/usr/bin/${program}`], [`./${program}`]]) {
        const checked = JSON.parse(execFileSync(codex, ["execpolicy", "check", "--rules", rules, "--resolve-host-executables", ...argv], { encoding: "utf8" }));
        expect(checked.decision, `${argv.join(" ")}: ${readFileSync(rules, "utf8")}`).toBe("prompt");
      }
  });
});

describe.each([
  ["pi", { model: "sim-1" }],
  ["engine_a", { model: "claude-sim" }],
] as const)("%s: read-only commands under ask and deny", (_engine, spec) => {
  it.each(["cat secret.txt", "ls"])("%s: asked, denied does not run, approved does; under deny does not run", async (command) => {
    const tool = { name: "shell", input: { command } };
    const no = await run({ ...spec, permissions: "ask" }, tool, "deny");
    expect(no.asked).toBe(1);
    expect(no.ran).toBe(false);
    const yes = await run({ ...spec, permissions: "ask" }, tool, "allow");
    expect(yes.asked).toBe(1);
    expect(yes.ran).toBe(true);
    const denied = await run({ ...spec, permissions: "deny" }, tool, "allow");
    expect(denied.asked).toBe(0);
    expect(denied.ran).toBe(false);
  });
});
