import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, FAULT_CLASSES, sim, waitFor } from "../support/http.js";

let front: Front;
let base: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-engine-a-"));

beforeAll(async () => {
  front = await startFront();
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { model: "claude-sim", ...spec });
  expect(r.status).toBe(201);
  expect((await call(base, "GET", `/threads/${r.body.threadId}`)).body.engine).toBe("engine_a");
  return r.body.threadId;
}

const log = (id: string) => events(base, id);

async function simRequests(): Promise<{ path: string; headers: Record<string, string>; body: any }[]> {
  return ((await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: any[] }).requests;
}

describe("engine_a: the vendor's agent SDK, offline against the simulator", () => {
  it("answers a text turn, then resumes the same session on the next turn", async () => {
    const id = await spawn();
    const first = await call(base, "POST", `/threads/${id}/send`, { text: "hello" });
    expect(first.body).toMatchObject({ outcome: "completed", reply: { text: "echo: hello" } });
    const sessions = readdirSync(join(front.dataDir, "engine", "engine_a", "threads"));
    expect(sessions).toContain(`${id}.json`);
    const second = await call(base, "POST", `/threads/${id}/send`, { text: "again" });
    expect(second.body.reply.text).toBe("echo: again");
    // The second model call carries the first exchange: the session was resumed.
    const last = (await simRequests()).filter((r) => r.path.startsWith("/v1/messages")).at(-1)!;
    expect(JSON.stringify(last.body.messages)).toMatch(/hello.*echo: hello.*again/s);
    // Placeholder credentials only, and only the simulator was asked.
    expect(last.headers["x-api-key"]).toBe("placeholder-not-a-key");
    const row = (await call(base, "GET", `/threads/${id}`)).body;
    expect(row.cost.usd).toBeGreaterThan(0);
    expect(row.cost.inputTokens).toBeGreaterThan(0);
  });

  it("asks for approval through canUseTool: allowed runs the command, denied does not", async () => {
    for (const decision of ["allow", "deny"] as const) {
      const id = await spawn({ cwd: work });
      const file = `made-by-${decision}.txt`;
      await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: `touch ${file}` } } }) });
      const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
      const listed = (await call(base, "GET", "/workspaces/default/approvals")).body.approvals.find((a: { approvalId: string }) => a.approvalId === approvalId);
      expect(listed).toMatchObject({ threadId: id, name: "Bash", input: { command: `touch ${file}` } });
      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision })).status).toBe(200);
      await waitFor(async () => !(await call(base, "GET", `/threads/${id}/turn`)).body.running);
      expect(existsSync(join(work, file))).toBe(decision === "allow");
      const events = await log(id);
      expect(events.find((e) => e.kind === "tool-call")?.body).toMatchObject({ name: "Bash" });
      expect(events.find((e) => e.kind === "tool-result")?.body).toMatchObject({ name: "Bash", isError: decision === "deny" });
      expect(events.at(-1)?.kind).toBe("turn-ended");
    }
  });

  it("interrupts a running turn", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ chunks: 30, delayMs: 300 }, "long") });
    await waitFor(async () => (await log(id)).some((e) => e.kind === "turn-started"));
    await new Promise((r) => setTimeout(r, 1000));
    const stopped = await call(base, "POST", `/threads/${id}/interrupt`);
    expect(stopped.body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "after" });
    expect(next.body.reply.text).toBe("echo: after");
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
});
