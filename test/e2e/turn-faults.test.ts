import { afterEach, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";

const fronts: Front[] = [];
const dirs = new Set<string>();
afterEach(async () => {
  for (const f of fronts.splice(0)) await f.stop().catch(() => {});
  for (const d of dirs) removeDir(d);
  dirs.clear();
});

async function start(options: Parameters<typeof startFront>[0] = {}): Promise<Front> {
  const f = await startFront(options);
  fronts.push(f);
  dirs.add(f.dataDir);
  return f;
}

const log = events;

describe("a host restart mid-turn", () => {
  it("writes the lost-turn message on boot, keeps every acknowledged event, and retries nothing", async () => {
    const port = String(await freePort());
    const first = await start({ env: { SERVICE_AGENTS_PORT: port } });
    const { threadId } = (await call(first.url, "POST", "/spawn", {})).body;
    const done = await call(first.url, "POST", `/threads/${threadId}/send`, { text: "before" });
    expect(done.body.outcome).toBe("completed");
    const slow = await call(first.url, "POST", `/threads/${threadId}/messages`, { text: sim({ chunks: 20, delayMs: 500 }, "never finishes") });
    const queued = await call(first.url, "POST", `/threads/${threadId}/messages`, { text: "waiting its turn", hold: true });
    await waitFor(async () => (await call(first.url, "GET", `/threads/${threadId}/turn`)).body.running);
    const acknowledged = await log(first.url, threadId);
    await first.kill9();
    fronts.splice(fronts.indexOf(first), 1);

    // The wait below polls the first page of /threads: lift the listing budget for it.
    const second = await start({ dataDir: first.dataDir, env: { SERVICE_AGENTS_PORT: port, SERVICE_THREAD_LIST_BUDGET: "100000" } });
    // The boot sweep wrote it: the catalog shows the thread idle without anyone reading it first.
    // A loaded machine (CI runs files side by side) can take well over the usual 15 s to boot and sweep.
    const listed = await waitFor(async () => {
      const t = (await call(second.url, "GET", "/threads")).body.threads.find((x: { id: string }) => x.id === threadId);
      return t?.stage === "idle" && t;
    }, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; the front said:\n${second.output()}`);
    });
    expect(listed.stage).toBe("idle");
    const events = await log(second.url, threadId);
    for (const e of acknowledged) expect(events.find((x) => x.seq === e.seq)).toEqual(e);
    const lost = events.filter((e) => e.seq > acknowledged.at(-1)!.seq);
    const system = lost.find((e) => e.kind === "system");
    expect(system?.body).toMatchObject({ level: "error", text: expect.stringMatching(/^This turn was lost to a host restart/) });
    const failed = lost.find((e) => e.kind === "turn-failed");
    expect(failed?.body).toMatchObject({ class: "session" });
    expect(events.filter((e) => e.kind === "turn-started")).toHaveLength(2);
    expect(events.some((e) => e.seq === slow.body.seq && e.kind === "message")).toBe(true);
    expect(events.some((e) => e.seq === queued.body.seq)).toBe(true);
    const turn = (await call(second.url, "GET", `/threads/${threadId}/turn`)).body;
    expect(turn).toMatchObject({ running: false });
    const next = await call(second.url, "POST", `/threads/${threadId}/send`, { text: "after the restart" });
    expect(next.body).toMatchObject({ outcome: "completed", reply: { text: expect.stringContaining("after the restart") } });
  });
});

describe("a degraded thread", () => {
  it("refuses turns once a turn's body cannot be saved, stays degraded across a restart, and reopens on recover", async () => {
    const port = String(await freePort());
    const env = { SERVICE_AGENTS_PORT: port, SERVICE_AGENTS_BLOB_THRESHOLD: "2048" };
    const first = await start({ env: { ...env, SERVICE_FAULTS: "blob-put" } });
    const { threadId } = (await call(first.url, "POST", "/spawn", { permissions: "allow" })).body;
    const big = "printf '%*s' 5000 '' | tr ' ' x";
    const sent = call(first.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: `sleep 0.3; ${big}` } } }) });
    await waitFor(async () => (await call(first.url, "GET", `/threads/${threadId}/turn`)).body.running);
    // Queued behind the turn that goes degraded: its sender hears so, and the message waits.
    const behind = await call(first.url, "POST", `/threads/${threadId}/send`, { text: "queued behind" });
    expect((await sent).body.outcome).toBe("completed");
    expect(behind.status).toBe(202);
    expect(behind.body).toMatchObject({ outcome: "queued", turnId: null, queuedBecause: { code: "thread-degraded", tag: "tool-result" } });
    const events = await log(first.url, threadId);
    const degraded = events.find((e) => e.kind === "degraded");
    expect(degraded?.body).toMatchObject({ key: expect.stringMatching(/^sha256\/[0-9a-f]{64}$/), index: 1, tag: "tool-result" });
    const stub = events.find((e) => e.kind === "tool-result");
    expect(stub?.body).toMatchObject({ output: "", lost: degraded!.body.key });
    const refused = await call(first.url, "POST", `/threads/${threadId}/messages`, { text: "more" });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: "thread-degraded", key: degraded!.body.key, index: 1, tag: "tool-result" });
    expect((await call(first.url, "GET", `/threads/${threadId}`)).body.stage).toBe("degraded");
    await first.stop();
    fronts.splice(fronts.indexOf(first), 1);

    const second = await start({ dataDir: first.dataDir, env });
    const still = await call(second.url, "POST", `/threads/${threadId}/send`, { text: "more" });
    expect(still.status).toBe(503);
    expect(still.body.code).toBe("thread-degraded");
    const noAck = await call(second.url, "POST", `/threads/${threadId}/recover`, { reason: "checked" });
    expect(noAck.status).toBe(400);
    const recovered = await call(second.url, "POST", `/threads/${threadId}/recover`, { acknowledgeHistoryGap: true, reason: "blob store repaired" });
    expect(recovered.status).toBe(200);
    // The message that waited runs now.
    await waitFor(async () => (await log(second.url, threadId)).some((e) => e.kind === "turn-started" && e.body.inputs.includes(behind.body.seq)));
    await waitFor(async () => !(await call(second.url, "GET", `/threads/${threadId}/turn`)).body.running);
    expect((await call(second.url, "POST", `/threads/${threadId}/recover`, { acknowledgeHistoryGap: true, reason: "again" })).status).toBe(409);
    const next = await call(second.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: big } } }) });
    expect(next.body.outcome).toBe("completed");
    const after = await log(second.url, threadId);
    const saved = after.filter((e) => e.kind === "tool-result").at(-1);
    expect(saved?.blob?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(saved?.body.output).toContain("x".repeat(5000));
    expect((await call(second.url, "GET", `/threads/${threadId}`)).body.stage).toBe("idle");
  });
});
