import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir, startFront } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-waits-"));
afterAll(() => removeDir(work));

// The catalog's safety alarm comes 20 s after a thread's activity here, not a minute, so the
// gate's approval below can outlast it in half a minute rather than a minute.
const SAFETY_MS = 20_000;
const front = useFront({ env: { SERVICE_CATALOG_SAFETY_MS: String(SAFETY_MS) } });

async function idle(base: string, id: string): Promise<void> {
  await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return !t.running && t.queued === 0;
  }, 30_000);
}

// Approvals and questions nobody answers do not hold a thread: each engine's turn goes on.
describe.each(EVERY_ENGINE)("waits that time out (%s)", (engine, spec) => {
  it("resolves an approval nobody answers as an expired deny, and the turn and the next one complete", async () => {
    const base = front().url;
    const spawned = await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask", approvalTimeoutMs: 1500 });
    expect(spawned.status).toBe(201);
    const id = spawned.body.threadId as string;
    expect((await call(base, "GET", `/threads/${id}`)).body.spec).toMatchObject({ approvalTimeoutMs: 1500, questionTimeoutMs: null });
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo never" } }, reply: "went on" }, "run it") });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const log = await events(base, id);
    const request = log.find((e) => e.kind === "approval-request")!;
    const resolved = log.find((e) => e.kind === "approval-resolved")!;
    expect(resolved.body).toEqual({ approvalId: request.body.approvalId, decision: "deny", expired: true });
    // The model is told nobody answered, not that a person said no (codex's decline carries no text).
    if (engine !== "engine_b") expect(log.find((e) => e.kind === "tool-result")?.body.output).toContain("nobody answered the approval for this");
    expect(Date.parse((resolved as unknown as { ts: string }).ts) - Date.parse((request as unknown as { ts: string }).ts)).toBeGreaterThanOrEqual(1400);
    const late = await call(base, "POST", `/threads/${id}/approvals/${request.body.approvalId}`, { decision: "allow" });
    expect([late.status, late.body.code, late.body.decision, late.body.expired]).toEqual([200, "approval-closed", "deny", true]);
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "and then?" })).body.outcome).toBe("completed");
  });

  it("dismisses a question nobody answers, and the thread takes its next message", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "allow", questionTimeoutMs: 1500 })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ ask: "which one?" }, "ask me"), async: true });
    await idle(base, id);
    const log = await events(base, id);
    const question = log.find((e) => e.kind === "question")!;
    expect(log.find((e) => e.kind === "question-resolved")!.body).toEqual({ requestId: question.body.requestId, action: "dismiss", expired: true });
    expect((await call(base, "GET", `/threads/${id}/questions/${question.body.requestId}`)).body.status).toBe("dismissed");
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "and then?" })).body.outcome).toBe("completed");
  });
});

describe("wait timeouts given", () => {
  it("are refused outside a second to a week", async () => {
    const base = front().url;
    for (const approvalTimeoutMs of [999, 604_800_001, 1.5, "60000"]) expect((await call(base, "POST", "/spawn", { approvalTimeoutMs })).status).toBe(400);
  });
});

// A gate's approval waits with no turn running. Its timeout comes after the catalog's
// safety alarm (`SAFETY_MS` after the spawn): the old code let that earlier alarm
// win and, once it had fired with no turn running, set none again, and the restart took the
// in-memory timer along. Nothing touches the thread after the restart: only its alarm can
// expire the approval (the workspace's approval index is read instead of the thread).
describe("a gate's approval across a restart", () => {
  // Restarts the file's front (the last test to use it) rather than one of its own: every front started costs the suite seconds.
  it("expires on time, past the catalog's safety alarm, with no turn running and its timer gone with the old front", async () => {
    const first = front();
    let second: Awaited<ReturnType<typeof startFront>> | undefined;
    try {
      const timeout = SAFETY_MS + 10_000;
      const id = (await call(first.url, "POST", "/spawn", { model: "sim-1", approvalTimeoutMs: timeout })).body.threadId as string;
      const gate = (await call(first.url, "POST", `/threads/${id}/gate`, { mode: "human", step: "ship", async: true })).body;
      expect(gate).toMatchObject({ passed: null, approvalId: expect.stringMatching(/^appr_/) });
      const opened = Date.parse((await events(first.url, id)).find((e) => e.seq === gate.seq)!.ts);
      await first.stop();
      second = await startFront({ dataDir: first.dataDir, env: { SERVICE_CATALOG_SAFETY_MS: String(SAFETY_MS) } });
      const base = second.url;
      const listed = async () => ((await call(base, "GET", "/workspaces/default/approvals")).body.approvals as { approvalId: string }[]).some((a) => a.approvalId === gate.approvalId);
      expect(await listed()).toBe(true);
      await waitFor(async () => !(await listed()), opened + timeout + 20_000 - Date.now());
      const log = await events(base, id);
      const resolved = log.find((e) => e.kind === "approval-resolved")!;
      expect(resolved.body).toEqual({ approvalId: gate.approvalId, decision: "deny", expired: true });
      expect(Date.parse(resolved.ts) - opened).toBeGreaterThanOrEqual(timeout);
      expect(Date.parse(resolved.ts) - opened).toBeLessThan(timeout + 10_000);
      expect(log.find((e) => e.kind === "gate")!.body).toMatchObject({ gate: gate.gate, passed: false, reasons: ["nobody answered the gate's approval in time"] });
    } finally {
      // The file's front removes the data directory they shared.
      await second?.stop();
    }
  }, 180_000);
});
