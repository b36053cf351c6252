import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, sim, waitFor } from "../support/http.js";
import { openFollow, until } from "../support/sse.js";

let front: Front;
let hub: Server;

/** A request with headers `fetch` will not let a caller forge (Host). */
function rawPost(path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(front.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  hub = createServer((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ buildSeatLimit: 4 })));
  await new Promise<void>((r) => hub.listen(0, "127.0.0.1", r));
  front = await startFront({
    env: {
      // No machine has a petabyte free: the keeper pauses spawns at its first measurement.
      SERVICE_KEEPER_PAUSE_GB: "1000000",
      SERVICE_KEEPER_RESUME_GB: "2000000",
      SERVICE_KEEPER_INTERVAL_MS: "200",
      SERVICE_THREAD_LIST_BUDGET: "3",
      SERVICE_HUB_URL: `http://127.0.0.1:${(hub.address() as AddressInfo).port}`,
    },
  });
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  hub.close();
});

describe("the disk keeper", () => {
  it("pauses spawns under the threshold: 503 spawns-paused with Retry-After; running threads unaffected", async () => {
    const r = await call(front.url, "POST", "/spawn", { model: "sim-1" });
    expect([r.status, r.body.code]).toEqual([503, "spawns-paused"]);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.body.error).toContain("free on the data volume");
    const state = await call(front.url, "GET", "/keeper/spawn-pause");
    expect(state.body).toMatchObject({ paused: true, pauseBelowBytes: 1e15, resumeAboveBytes: 2e15, cleared: null });
    expect(state.body.freeBytes).toBeGreaterThan(0);
  });

  it("is cleared early by an operator on this machine only, with a reason, and stays cleared", async () => {
    const forged = await rawPost("/keeper/spawn-pause/clear", { host: "attacker.example" }, { reason: "rebinding" });
    expect([forged.status, forged.body.code]).toEqual([403, "untrusted-caller"]);
    const origin = await rawPost("/keeper/spawn-pause/clear", { origin: "https://attacker.example" }, { reason: "cross-site" });
    expect(origin.status).toBe(403);
    expect((await call(front.url, "POST", "/keeper/spawn-pause/clear", {})).status).toBe(400);
    const cleared = await call(front.url, "POST", "/keeper/spawn-pause/clear", { reason: "moved the old runs to another disk" });
    expect(cleared.body).toMatchObject({ paused: false, cleared: { reason: "moved the old runs to another disk" } });
    // The next measurements (every 200 ms) still see too little space, and do not undo the clear.
    const checked = cleared.body.checkedAt;
    await waitFor(async () => (await call(front.url, "GET", "/keeper/spawn-pause")).body.checkedAt !== checked);
    expect((await call(front.url, "POST", "/spawn", { model: "sim-1" })).status).toBe(201);
  });
});

describe("attention items", () => {
  it("lists what needs a person, follows it as SSE, and closes items once handled", async () => {
    const follow = await openFollow(front.url, "/attention/follow?after=0");
    try {
      expect(follow.headers["content-type"]).toMatch(/^text\/event-stream/);
      const { threadId } = (await call(front.url, "POST", "/spawn", { model: "sim-1", permissions: "ask" })).body;
      await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool: { name: "shell", input: { command: "true" } } }) });
      const item = await waitFor(async () => ((await call(front.url, "GET", "/attention")).body.items as any[]).find((i) => i.kind === "approval"));
      expect(item).toMatchObject({ threadId, workspace: null, detail: { name: "shell" } });
      expect((await call(front.url, "GET", `/attention/${encodeURIComponent(item.id)}`)).body.id).toBe(item.id);
      await call(front.url, "POST", `/threads/${threadId}/approvals/${item.detail.approvalId}`, { decision: "deny" });
      await until(() => follow.frames.some((f) => f.includes('"change":"closed"') && f.includes(item.id)));
      const opened = follow.frames.findIndex((f) => f.includes('"change":"opened"') && f.includes(item.id));
      const closed = follow.frames.findIndex((f) => f.includes('"change":"closed"') && f.includes(item.id));
      expect(opened).toBeGreaterThan(-1);
      expect(closed).toBeGreaterThan(opened);
      const missing = await call(front.url, "GET", `/attention/${encodeURIComponent(item.id)}`);
      expect([missing.status, missing.body.code]).toEqual([404, "attention-not-found"]);
      const changes = await call(front.url, "GET", "/attention/changes?after=0");
      expect(changes.body.changes.map((c: any) => c.change)).toContain("closed");
      const resumed = await call(front.url, "GET", `/attention/changes?after=${changes.body.nextAfter}`);
      expect(resumed.body.changes).toEqual([]);
    } finally {
      follow.close();
    }
  });

  it("names routes that exist for a waiting question, and following one answers it", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { model: "sim-1" })).body;
    await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ ask: "Ship it?" }) });
    const item = await waitFor(async () => ((await call(front.url, "GET", "/attention")).body.items as any[]).find((i) => i.kind === "question" && i.threadId === threadId));
    const path = /^POST (\S+\/answer) /.exec(item.action)?.[1];
    expect(path).toBe(`/threads/${threadId}/questions/${item.detail.requestId}/answer`);
    expect(item.action).toContain(".../dismiss");
    expect(item.action).toContain(".../continue");
    expect((await call(front.url, "POST", path!, { answer: "yes" })).status).toBe(200);
    await waitFor(async () => !((await call(front.url, "GET", "/attention")).body.items as any[]).some((i) => i.id === item.id));
  });
});

describe("peers and previews", () => {
  it("lists the local peer and registers external ones, from local callers only", async () => {
    const listed = await call(front.url, "GET", "/peers");
    expect(listed.body.peers[0]).toMatchObject({ name: "local", kind: "local" });
    expect(listed.body.peers[0].engines.map((e: any) => e.engine)).toContain("pi");
    const forged = await rawPost("/peers/external", { host: "attacker.example" }, { name: "ci" });
    expect([forged.status, forged.body.code]).toEqual([403, "untrusted-caller"]);
    const added = await call(front.url, "POST", "/peers/external", { name: "ci", url: "https://ci.example.com", description: "records CI runs" });
    expect(added.status).toBe(201);
    expect((await call(front.url, "POST", "/peers/external", { name: "ci" })).body.code).toBe("peer-exists");
    expect((await call(front.url, "GET", "/peers")).body.peers.map((p: any) => p.name)).toEqual(["local", "ci"]);
    // What such a peer does: keeps a thread here that records its work, which no local engine answers.
    const { threadId } = (await call(front.url, "POST", "/spawn", { type: "external", title: "CI run 812" })).body;
    expect((await call(front.url, "POST", `/threads/${threadId}/messages`, { text: "build passed", from: "ci" })).status).toBe(202);
    const refused = await call(front.url, "POST", `/threads/${threadId}/send`, { text: "anyone there?" });
    expect([refused.status, refused.body.code]).toEqual([409, "record-only-thread"]);
    // The message started no turn and queued none: decided when it was appended, so the state says it now.
    expect((await call(front.url, "GET", `/threads/${threadId}/turn`)).body).toMatchObject({ running: false, queued: 0 });
    const kinds = ((await call(front.url, "GET", `/threads/${threadId}/tail`)).body.events as any[]).map((e) => e.kind);
    expect(kinds).toEqual(["spawn", "message"]);
    expect((await call(front.url, "DELETE", "/peers/external/ci")).status).toBe(200);
    expect((await call(front.url, "DELETE", "/peers/external/ci")).body.code).toBe("peer-not-found");
  });

  it("records a thread's local server preview, and reports whether its port answers", async () => {
    const site = createServer((_req, res) => res.end("preview"));
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    const port = (site.address() as AddressInfo).port;
    const { threadId } = (await call(front.url, "POST", "/spawn", { model: "sim-1" })).body;
    const made = await call(front.url, "POST", "/previews", { threadId, port, command: "npm run dev" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ threadId, port, command: "npm run dev", url: `http://127.0.0.1:${port}/`, status: "up" });
    site.close();
    site.closeAllConnections();
    expect((await call(front.url, "GET", `/previews/${made.body.id}`)).body.status).toBe("down");
    expect((await call(front.url, "GET", "/previews")).body.previews.map((p: any) => p.id)).toEqual([made.body.id]);
    expect((await call(front.url, "POST", "/previews", { threadId: "thr_nobody", port, command: "x" })).status).toBe(404);
    expect((await call(front.url, "POST", "/previews", { threadId, port: 70000, command: "x" })).status).toBe(400);
    expect((await call(front.url, "DELETE", `/previews/${made.body.id}`)).status).toBe(200);
    expect((await call(front.url, "GET", `/previews/${made.body.id}`)).body.code).toBe("preview-not-found");
  });
});

describe("the first-page listing budget", () => {
  it("answers 429 thread-list-rate-limited with Retry-After once a client spent it; other clients and later pages are free", async () => {
    const list = (client: string, q = "") => fetch(`${front.url}/threads${q}`, { headers: { "x-service-client": client } });
    for (let i = 0; i < 3; i++) expect((await list("dashboard")).status).toBe(200);
    const spent = await list("dashboard");
    expect(spent.status).toBe(429);
    const body = (await spent.json()) as any;
    expect(body.code).toBe("thread-list-rate-limited");
    expect(Number(spent.headers.get("retry-after"))).toBeGreaterThan(0);
    const other = await list("another-tool", "?limit=1");
    expect(other.status).toBe(200);
    // Paging on with a real cursor is free for the spent client too.
    const { nextAfter } = (await other.json()) as { nextAfter: string | null };
    expect(nextAfter).not.toBeNull();
    expect((await list("dashboard", `?limit=1&after=${nextAfter}`)).status).toBe(200);
  });
});

describe("watching the host", () => {
  it("GET /host-load: load averages, CPU count, and no device simulators on this machine", async () => {
    const r = await call(front.url, "GET", "/host-load");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.load)).toEqual(["1m", "5m", "15m"]);
    expect(r.body.cpus).toBeGreaterThan(0);
    expect(r.body.deviceSimulators).toEqual([]);
  });

  it("GET /limits: the build seat limit from the hub, and the host's own limits", async () => {
    const r = await call(front.url, "GET", "/limits");
    expect(r.body.hub).toMatchObject({ buildSeatLimit: 4 });
    // The hub's limit is how many build threads one pull request may have at once (docs/rooms.md).
    expect(r.body.buildThreadsPerPullRequest).toEqual({ limit: 4, source: "hub" });
    expect(r.body).toMatchObject({ sessionCap: 16, threadListFirstPagesPerMinute: 3, tailPage: { max: 1000 } });
  });

  it("GET /timings and /metrics (JSON and Prometheus text)", async () => {
    const timings = await call(front.url, "GET", "/timings");
    const spawn = timings.body.routes.find((r: any) => r.route === "POST /spawn");
    expect(spawn.count).toBeGreaterThanOrEqual(3);
    expect(spawn.p99Ms).toBeGreaterThan(0);
    const json = await call(front.url, "GET", "/metrics");
    expect(json.body.threads.live).toBeGreaterThanOrEqual(2);
    expect(json.body.spawnsPaused).toBe(false);
    const text = await fetch(`${front.url}/metrics`, { headers: { accept: "text/plain" } });
    expect(text.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await text.text();
    expect(body).toMatch(/^# HELP agent_runtime_threads /m);
    expect(body).toMatch(/^agent_runtime_threads\{state="live"\} \d+$/m);
    expect(body).toMatch(/^agent_runtime_requests_total\{route="POST \/spawn"\} \d+$/m);
    const counters = [...body.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => m[1]);
    expect(counters).toEqual(["agent_runtime_cost_usd_total", "agent_runtime_requests_total", "agent_runtime_request_errors_total"]);
    for (const name of counters) expect(body).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? \\S+$`, "m"));
  });

  it("GET /metrics/history, /estate, /keeper and /cost-per-merged-pr", async () => {
    const history = await call(front.url, "GET", "/metrics/history");
    expect(history.body.samples.length).toBeGreaterThan(0);
    expect(history.body.samples[0]).toHaveProperty("freeBytes");
    expect((await call(front.url, "GET", "/metrics/history?since=soon")).status).toBe(400);
    const estate = await call(front.url, "GET", "/metrics/estate");
    expect(estate.body.byType.chat).toBeGreaterThanOrEqual(2);
    const keeper = await call(front.url, "GET", "/metrics/keeper");
    expect(keeper.body.spawnPause.paused).toBe(false);
    expect(keeper.body.freeBytes.length).toBeGreaterThan(0);
    // No thread here worked on a pull request: nothing to count (test/e2e/rooms.test.ts counts them).
    const cost = await call(front.url, "GET", "/metrics/cost-per-merged-pr");
    expect(cost.body).toEqual({ prs: [], merged: { count: 0, usd: 0, perPr: null }, all: { count: 0, usd: 0 }, unknown: 0 });
  });
});

describe("the live-session cap", () => {
  let capped: Front;
  beforeAll(async () => {
    capped = await startFront({ env: { SERVICE_SESSION_CAP: "1", SERVICE_SESSION_IDLE_MS: "1500", SERVICE_CATALOG_SYNC_MS: "50" } });
  });
  afterAll(async () => {
    await capped?.stop();
    removeDir(capped.dataDir);
  });

  it("refuses a spawn at the cap with 429 session-cap, then evicts the session idle long enough, keeping its thread", async () => {
    const { threadId: waiting } = (await call(capped.url, "POST", "/spawn", { model: "sim-1", permissions: "ask" })).body;
    await call(capped.url, "POST", `/threads/${waiting}/messages`, { text: sim({ tool: { name: "shell", input: { command: "true" } } }) });
    await waitFor(async () => (await call(capped.url, "GET", `/threads/${waiting}`)).body.stage === "waiting");
    const live = await call(capped.url, "GET", "/live");
    expect(live.body.threads).toEqual([waiting]);
    expect(live.body.sessions[0]).toMatchObject({ threadId: waiting, stage: "waiting" });

    const refused = await call(capped.url, "POST", "/spawn", { model: "sim-1" });
    expect([refused.status, refused.body.code]).toEqual([429, "session-cap"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    // Admitted once the waiting session has been idle long enough to evict.
    await waitFor(async () => (await call(capped.url, "POST", "/spawn", { model: "sim-1" })).status === 201);
    const row = await waitFor(async () => {
      const r = (await call(capped.url, "GET", `/threads/${waiting}`)).body;
      return r.stage === "idle" && r;
    });
    expect(row.archived).toBe(false);
    const log = (await call(capped.url, "GET", `/threads/${waiting}/tail?limit=1000`)).body.events as any[];
    expect(log.find((e) => e.kind === "turn-failed")?.body).toMatchObject({ class: "closed" });
    expect(log.find((e) => e.kind === "approval-resolved")?.body).toMatchObject({ decision: "cancelled" });
  });
});
