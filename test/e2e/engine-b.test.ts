import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, FAULT_CLASSES, sim, waitFor } from "../support/http.js";

let front: Front;
let base: string;
let port: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-engine-b-"));

beforeAll(async () => {
  port = String(await freePort());
  front = await startFront({ env: { SERVICE_AGENTS_PORT: port } });
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { engine: "engine_b", model: "gpt-sim", cwd: work, ...spec });
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const log = (id: string) => events(base, id);

describe("engine_b: codex app-server 0.160.0, offline against the simulator", () => {
  it("lists the pinned CLI among the engines", async () => {
    const engines = (await call(base, "GET", "/accounts")).body.engines;
    expect(engines.find((e: { engine: string }) => e.engine === "engine_b")).toMatchObject({ versionFound: "0.160.0", versionNeeded: "0.160.0", available: true });
  });

  it("answers a text turn, then resumes the same codex thread on the next turn", async () => {
    const id = await spawn();
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "hello" })).body).toMatchObject({ outcome: "completed", reply: { text: "echo: hello" } });
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "again" })).body.reply.text).toBe("echo: again");
    const requests = ((await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: { path: string; headers: Record<string, string>; body: any }[] }).requests;
    const last = requests.filter((r) => r.path === "/v1/responses").at(-1)!;
    expect(JSON.stringify(last.body.input)).toMatch(/hello.*echo: hello.*again/s);
    // A placeholder credential only.
    expect(last.headers.authorization).toBe("Bearer placeholder-not-a-key");
  });

  it("maps command approvals to the runtime's: allowed runs, denied does not", async () => {
    for (const decision of ["allow", "deny"] as const) {
      const id = await spawn();
      const file = `codex-${decision}.txt`;
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: `touch ${file}` } } }) });
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision })).status).toBe(200);
      await waitFor(async () => !(await call(base, "GET", `/threads/${id}/turn`)).body.running);
      expect(existsSync(join(work, file))).toBe(decision === "allow");
      const events = await log(id);
      expect(events.find((e) => e.kind === "tool-call")?.body).toMatchObject({ name: "exec_command" });
      expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ isError: decision === "deny" });
      expect(events.at(-1)?.kind).toBe("turn-ended");
    }
  });

  it("interrupts a running turn with turn/interrupt", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 20, delayMs: 300 }, "long") });
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-started"));
    await new Promise((r) => setTimeout(r, 1000));
    expect((await call(base, "POST", `/threads/${id}/interrupt`)).body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    // codex drops the interrupted reply from its history, so the echo also covers "long".
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "after" })).body.reply.text).toMatch(/^echo: [\s\S]*after$/);
  });

  it("continues a turn that stalled after a tool result", async () => {
    const id = await spawn({ permissions: "allow" });
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo stalled" } }, stall: true }) });
    expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    const events = await log(id);
    expect(events.find((e) => e.kind === "turn-failed")?.body.class).toBe("stalled");
    expect(events.some((e) => e.kind === "message" && e.body.from === "runtime")).toBe(true);
  });

  it("records each simulated provider fault with its class", async () => {
    const id = await spawn();
    for (const [fail, cls] of FAULT_CLASSES) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ fail }) });
      expect(r.body.failure?.class, `${fail}: ${r.body.failure?.error}`).toBe(cls);
    }
  });

  it("refuses engine_b spawns, and fails engine_b turns, when SERVICE_ENGINE_B_BIN is not the pinned release", async () => {
    const id = await spawn();
    await front.stop();
    front = await startFront({ dataDir: front.dataDir, env: { SERVICE_AGENTS_PORT: port, SERVICE_ENGINE_B_BIN: "/bin/echo" } });
    const spawned = await call(base, "POST", "/spawn", { engine: "engine_b", model: "gpt-sim" });
    expect(spawned.status).toBe(503);
    expect(spawned.body).toMatchObject({ code: "engine-unavailable", engine: { binary: "/bin/echo", versionNeeded: "0.160.0", available: false } });
    const turn = await call(base, "POST", `/threads/${id}/send`, { text: "hi" });
    expect(turn.body).toMatchObject({ outcome: "failed", failure: { class: "engine-unavailable" } });
    expect((await call(base, "POST", "/spawn", { model: "sim-1" })).status).toBe(201);
  });
});
