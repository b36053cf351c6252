import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { descendants } from "../support/processes.js";

let front: Front;

beforeAll(async () => {
  front = await startFront();
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
});

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * The engine's own process among the front's descendants: the program itself, not the
 * bwrap or forwarder around it (their command lines name it too, as an argument).
 */
function engineProcess(program: string, arg?: string): number | undefined {
  return descendants(front.proc.pid!).find((pid) => {
    const argv = argvOf(pid);
    return argv[0] !== undefined && basename(argv[0]) === program && (arg === undefined || argv[1] === arg);
  });
}

/**
 * engine_a and engine_b run a process of their own per turn (the agent SDK's CLI, `codex
 * app-server`), inside the sandbox. pi runs in the front's own process: its death is the
 * host's, which turn-faults.test.ts covers (the next boot records the lost turn).
 */
describe.each([
  ["engine_a", { model: "claude-sim" }, "claude", undefined],
  ["engine_b", { engine: "engine_b", model: "gpt-sim" }, "codex", "app-server"],
] as const)("%s's process killed mid-turn", (_engine, spec, program, arg) => {
  it("fails the turn as session naming how it died, and the next turn completes", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { ...spec, permissions: "ask" })).body;
    // The turn waits on an approval: the engine's process is alive, mid-turn, until it is killed.
    await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool: { name: "shell", input: { command: "true" } } }) });
    await waitFor(async () => (await call(front.url, "GET", `/threads/${threadId}/turn`)).body.waitingOn.approvals[0]);
    const pid = engineProcess(program, arg);
    expect(pid, `no ${program} process below the front`).toBeDefined();
    process.kill(pid!, "SIGKILL");
    const failed = await waitFor(async () => (await events(front.url, threadId)).find((e) => e.kind === "turn-failed"));
    expect(failed.body.class, failed.body.error).toBe("session");
    expect(failed.body.error).toMatch(/SIGKILL/);
    const next = await call(front.url, "POST", `/threads/${threadId}/send`, { text: "after the crash" });
    expect(next.body, JSON.stringify(next.body)).toMatchObject({ outcome: "completed", reply: { text: expect.stringContaining("after the crash") } });
  });
});
