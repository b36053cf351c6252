import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedEntry } from "../../src/api/workspace-feed.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, sim, waitFor } from "../support/http.js";
import { openFollow, seqs, until, type RawFollow } from "../support/sse.js";

let front: Front;
let base: string;
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-feeds-"));
const streams: RawFollow[] = [];

beforeAll(async () => {
  writeFileSync(
    join(dataDir, "workspaces.json"),
    JSON.stringify({ workspaces: [{ name: "feeds", slug: "acme/feeds", policy: { defaults: { permissions: "ask" } } }] }),
  );
  front = await startFront({ dataDir, env: { SERVICE_SSE_HEARTBEAT_MS: "300" } });
  base = front.url;
});
afterAll(async () => {
  for (const s of streams) s.close();
  await front?.stop();
  removeDir(dataDir);
});

async function follow(path: string, headers: Record<string, string> = {}): Promise<RawFollow> {
  const s = await openFollow(base, path, headers);
  streams.push(s);
  return s;
}

function entries(s: RawFollow): FeedEntry[] {
  return s.frames.filter((f) => f.startsWith("id: ")).map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)) as FeedEntry);
}

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { workspace: "feeds", ...spec });
  expect(r.status).toBe(201);
  return r.body.threadId;
}

async function idle(id: string): Promise<void> {
  await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return !t.running && t.queued === 0;
  });
}

/** The whole feed, oldest first, read by `tail`. */
async function feed(): Promise<FeedEntry[]> {
  return (await call(base, "GET", "/workspaces/feeds/tail?after=0&limit=1000")).body.events;
}

let worker: string;
let archived: string;

describe("workspace feeds through the real front", () => {
  it("streams the workspace's events in order, with ascending ids and the SSE headers", async () => {
    const events = await follow("/workspaces/feeds/events");
    expect(events.status).toBe(200);
    expect(events.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(events.headers["cache-control"]).toBe("no-cache, no-transform");
    expect(events.headers["x-accel-buffering"]).toBe("no");

    worker = await spawn({ title: "worker" });
    archived = await spawn({ title: "short-lived" });
    await call(base, "POST", `/threads/${worker}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo hi" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${worker}/turn`)).body.waitingOn.approvals[0]);
    expect((await call(base, "POST", `/threads/${worker}/approvals/${approvalId}`, { decision: "allow" })).status).toBe(200);
    await idle(worker);
    expect((await call(base, "DELETE", `/threads/${archived}?reason=done`)).status).toBe(200);
    expect((await call(base, "PUT", "/workspaces/feeds/policy", { defaults: { permissions: "allow" } })).status).toBe(200);

    await until(() => entries(events).some((e) => e.kind === "policy-changed"));
    const seen = entries(events);
    expect(seqs(events)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.map((e) => e.seq)).toEqual(seqs(events));
    const at = (match: (e: FeedEntry) => boolean) => {
      const i = seen.findIndex(match);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [
      at((e) => e.kind === "thread-spawned" && e.threadId === worker),
      at((e) => e.kind === "thread-spawned" && e.threadId === archived),
      at((e) => e.kind === "approval-opened" && e.approvalId === approvalId),
      at((e) => e.kind === "approval-resolved" && e.approvalId === approvalId),
      at((e) => e.kind === "thread-archived" && e.threadId === archived),
      at((e) => e.kind === "policy-changed"),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(seen[order[0]!]).toMatchObject({ title: "worker", engine: "pi", role: "chat" });
    expect(seen[order[3]!]).toMatchObject({ threadId: worker, decision: "allow" });
    expect(seen[order[4]!]).toMatchObject({ reason: "done" });
    expect(seen[order[5]!]).toMatchObject({ threadId: null, policy: { defaults: { permissions: "allow" } } });
    // The worker's summary as the catalog has it: waiting on the approval, then idle again.
    const stages = seen.filter((e) => e.kind === "thread-changed" && e.threadId === worker).map((e) => e.kind === "thread-changed" && e.summary.stage);
    expect(stages).toContain("waiting");
    await until(() => entries(events).some((e) => e.kind === "thread-changed" && e.threadId === worker && e.summary.stage === "idle"));
    expect(entries(events).find((e) => e.kind === "thread-changed" && e.threadId === archived && e.summary.archived)).toBeDefined();
  });

  it("carries only the named thread's changes on /changes?threads=", async () => {
    const changes = await follow(`/workspaces/feeds/changes?threads=${worker}`);
    const expected = (await feed())
      .filter((e) => e.threadId === worker && ["thread-spawned", "thread-changed", "thread-archived", "thread-restored"].includes(e.kind))
      .map((e) => e.seq);
    await until(() => seqs(changes).length >= expected.length);
    expect(seqs(changes)).toEqual(expected);
    expect(entries(changes).every((e) => e.threadId === worker)).toBe(true);
    // A change to another thread does not reach it; one to the watched thread does.
    await call(base, "POST", `/threads/${archived}/restore`);
    await call(base, "PUT", `/threads/${worker}/seat-lease`, { seatLease: "seat-7" });
    await until(() => entries(changes).some((e) => e.kind === "thread-changed" && e.summary.seatLease === "seat-7"));
    expect(entries(changes).every((e) => e.threadId === worker)).toBe(true);
  });

  it("resumes with Last-Event-ID with no gap and no duplicate, and ?after= the same", async () => {
    const all = (await feed()).map((e) => e.seq);
    const cut = all[Math.floor(all.length / 2)]!;
    const resumed = await follow("/workspaces/feeds/events?after=1", { "last-event-id": String(cut) });
    await until(() => seqs(resumed).length >= all.length - cut);
    await call(base, "PUT", "/workspaces/feeds/policy", { defaults: { permissions: "deny" } });
    const last = all[all.length - 1]! + 1;
    await until(() => seqs(resumed).includes(last));
    expect(seqs(resumed)).toEqual(Array.from({ length: last - cut }, (_, i) => cut + 1 + i));
    const byQuery = await follow(`/workspaces/feeds/events?after=${cut}`);
    await until(() => seqs(byQuery).includes(last));
    expect(seqs(byQuery)).toEqual(seqs(resumed));
  });

  it("sends heartbeats on an idle stream", async () => {
    const latest = (await call(base, "GET", "/workspaces/feeds/tail?limit=1")).body.events[0].seq;
    const idleStream = await follow(`/workspaces/feeds/changes?after=${latest}`);
    await until(() => idleStream.frames.includes(": heartbeat"), 5000);
    expect(idleStream.frames[0]).toBe("retry: 2000");
  });

  it("pages /tail: the newest without a cursor, older with before, newer with after", async () => {
    const all = await feed();
    const newest = (await call(base, "GET", "/workspaces/feeds/tail?limit=3")).body;
    expect(newest.events.map((e: FeedEntry) => e.seq)).toEqual(all.slice(-3).reverse().map((e) => e.seq));
    expect(newest.hasMore).toBe(true);
    const back: number[] = [];
    let before = "latest";
    for (;;) {
      const page = (await call(base, "GET", `/workspaces/feeds/tail?before=${before}&limit=4`)).body;
      back.push(...page.events.map((e: FeedEntry) => e.seq));
      if (!page.hasMore) break;
      before = page.prevBefore;
    }
    expect(back).toEqual(all.map((e) => e.seq).reverse());
    const forward: number[] = [];
    let after = "0";
    for (;;) {
      const page = (await call(base, "GET", `/workspaces/feeds/tail?after=${after}&limit=5`)).body;
      forward.push(...page.events.map((e: FeedEntry) => e.seq));
      after = page.nextAfter;
      if (!page.hasMore) break;
    }
    expect(forward).toEqual(all.map((e) => e.seq));
    expect((await call(base, "GET", `/workspaces/feeds/tail?after=${after}`)).body).toEqual({ events: [], nextAfter: after, hasMore: false });
  });

  it("answers 404 workspace-not-found for a workspace not configured, and reads `default`", async () => {
    for (const route of ["events", "changes", "tail"]) {
      const r = await call(base, "GET", `/workspaces/gamma/${route}`);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: "workspace-not-found", workspaces: ["feeds"] });
    }
    const loose = (await call(base, "POST", "/spawn", {})).body.threadId;
    const tail = (await call(base, "GET", "/workspaces/default/tail")).body;
    expect(tail.events.some((e: FeedEntry) => e.kind === "thread-spawned" && e.threadId === loose)).toBe(true);
  });

  it("refuses a bad query with 400, an error and its code", async () => {
    const many = Array.from({ length: 101 }, () => worker).join(",");
    const bad = [
      "/workspaces/feeds/changes?threads=",
      `/workspaces/feeds/changes?threads=${worker},`,
      `/workspaces/feeds/changes?threads=${many}`,
      "/workspaces/feeds/changes?threads=thr_nope",
      "/workspaces/feeds/events?after=-1",
      "/workspaces/feeds/events?after=999999",
      "/workspaces/feeds/tail?limit=0",
      "/workspaces/feeds/tail?limit=ten",
      "/workspaces/feeds/tail?after=x",
      "/workspaces/feeds/tail?after=1&before=5",
      "/workspaces/feeds/tail?after=999999",
    ];
    for (const path of bad) {
      const r = await call(base, "GET", path);
      expect([path, r.status]).toEqual([path, 400]);
      expect([path, Object.keys(r.body).sort()]).toEqual([path, ["code", "error"]]);
    }
    const header = await fetch(`${base}/workspaces/feeds/events`, { headers: { "last-event-id": "nope" } });
    expect(header.status).toBe(400);
    expect(await header.json()).toMatchObject({ error: expect.any(String), code: "invalid-header" });
  });

  it("clamps a feed page to 1000, with more than 1000 entries to page", async () => {
    // Each policy change is one entry; a policy equal to the current one writes none.
    let n = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (n < 1005) expect((await call(base, "PUT", "/workspaces/feeds/policy", { defaults: { approvalTimeoutMs: 1000 + n++ } })).status).toBe(200);
    }));
    const total = (await call(base, "GET", "/workspaces/feeds/tail?before=latest&limit=1")).body.events[0].seq;
    expect(total).toBeGreaterThan(1000);
    const forward = (await call(base, "GET", "/workspaces/feeds/tail?after=0&limit=5000")).body;
    expect(forward.events).toHaveLength(1000);
    expect(forward.hasMore).toBe(true);
    const backward = (await call(base, "GET", "/workspaces/feeds/tail?before=latest&limit=5000")).body;
    expect(backward.events).toHaveLength(1000);
    expect(backward.events[0].seq).toBe(total);
  });
});
