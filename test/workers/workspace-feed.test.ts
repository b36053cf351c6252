import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FEED_RETAIN, type WorkspaceFeed } from "../../objects/workspace/feed.js";
import type { Workspace } from "../../objects/workspace.js";
import type { ThreadSummary } from "../../src/api/threads.js";
import type { FeedEntry } from "../../src/api/workspace-feed.js";
import { workspaceOf } from "../../src/platform/stubs.js";
import { newThreadId } from "../../src/shared/ids.js";
import { waitFor } from "../support/wait-for.js";
import { dataFrames, idsSeenWhileWriting, newThread, readFrames, SPEC, stubOf, value } from "./support.js";

const ws = (name: string) => workspaceOf(env, name);

async function page(name: string, q: { after?: number; before?: number; limit: number }): Promise<{ events: FeedEntry[]; [k: string]: unknown }> {
  return JSON.parse(value(await ws(name).page(q)));
}

async function all(name: string): Promise<FeedEntry[]> {
  return (await page(name, { after: 0, limit: 1000 })).events;
}

async function open(name: string, path: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const res = await ws(name).fetch(`https://workspace${path}`, { signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return res.body!;
}

function summary(id: string, lastSeq: number, extra: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    id,
    title: "t",
    role: "chat",
    type: "chat",
    workspace: "w",
    parent: null,
    engine: "pi",
    model: "sim-1",
    stage: "idle",
    archived: false,
    seatLease: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    lastSeq,
    cost: { usd: 0, inputTokens: 0, outputTokens: 0 },
    ...extra,
  };
}

describe("a workspace's feed", () => {
  it("numbers entries from 1 without gaps when threads, heads and policies race", async () => {
    const name = "feed-race";
    await Promise.all([
      ...Array.from({ length: 8 }, () => newThread({ workspace: name })),
      ws(name).claimHead(newThreadId()),
      ws(name).setPolicy(JSON.stringify({ defaults: { model: "sim-2" } })),
    ]);
    const entries = await all(name);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.filter((e) => e.kind === "thread-spawned")).toHaveLength(8);
    expect(entries.filter((e) => e.kind === "head-changed")).toHaveLength(1);
    expect(entries.filter((e) => e.kind === "policy-changed")).toHaveLength(1);
  });

  it("records a spawn, then each change of its summary once, and the lifecycle in order", async () => {
    const name = "feed-lifecycle";
    // As createThread does: the head slot first, then the thread.
    const id = newThreadId();
    await ws(name).claimHead(id);
    const stub = stubOf(id);
    value(await stub.init(id, { ...SPEC, workspace: name, role: "head", title: "lead" }));
    const spawned = (await all(name))[1]!;
    expect(spawned).toMatchObject({ seq: 2, kind: "thread-spawned", threadId: id, role: "head", title: "lead", engine: "pi", model: "sim-1", parent: null });
    // The spawn's own summary push is its starting point, not a change.
    expect((await all(name)).filter((e) => e.kind === "thread-changed")).toHaveLength(0);

    value(await stub.postMessage({ text: "held", hold: true }));
    const changed = await waitFor(async () => (await all(name)).find((e) => e.kind === "thread-changed"));
    expect(changed).toMatchObject({ threadId: id, summary: { id, lastSeq: 2 } });

    value(await stub.archive("done"));
    value(await stub.restore());
    const kinds = (await all(name)).map((e) => e.kind);
    expect(kinds).toEqual([
      "head-changed",
      "thread-spawned",
      "thread-changed",
      "thread-archived",
      "thread-changed",
      "head-changed",
      "head-changed",
      "thread-restored",
      "thread-changed",
    ]);
    const entries = await all(name);
    expect(entries.find((e) => e.kind === "thread-archived")).toMatchObject({ threadId: id, reason: "done" });
    expect(entries.filter((e) => e.kind === "head-changed").map((e) => e.kind === "head-changed" && e.head)).toEqual([id, null, id]);
    expect(entries.filter((e) => e.kind === "thread-changed").map((e) => e.kind === "thread-changed" && e.summary.archived)).toEqual([false, true, false]);
  });

  it("drops a summary that says nothing new, or older than the last one recorded", async () => {
    const name = "feed-dedupe";
    const id = newThreadId();
    await ws(name).threadChanged(summary(id, 3));
    await ws(name).threadChanged(summary(id, 3));
    await ws(name).threadChanged(summary(id, 2, { stage: "running" }));
    await ws(name).threadChanged(summary(id, 3, { stage: "waiting" }));
    await ws(name).threadChanged(summary(id, 3, { stage: "waiting" }));
    const entries = await all(name);
    expect(entries.map((e) => e.kind === "thread-changed" && e.summary.stage)).toEqual(["idle", "waiting"]);
  });

  it("records the head slot, the policy and the waits, each once", async () => {
    const name = "feed-index";
    const head = newThreadId();
    const w = ws(name);
    expect(await w.claimHead(head)).toEqual({ holder: null, taken: true });
    await w.claimHead(head);
    await w.releaseHead(head);
    await w.releaseHead(head);
    const policy = JSON.stringify({ defaults: { permissions: "allow" } });
    await w.setPolicy(policy);
    await w.setPolicy(policy);
    const opened = { approvalId: "appr_1", threadId: head, turnId: "turn_1", seq: 4, name: "shell", input: { command: "ls" }, openedAt: "2026-01-01T00:00:00.000Z" };
    await w.approvalOpened(opened);
    await w.closed("approval", "appr_1", "allow");
    await w.closed("approval", "appr_1", "allow");
    await w.questionOpened({ requestId: "q_1", threadId: head, turnId: "turn_1", seq: 6, question: "why?", openedAt: "2026-01-01T00:00:00.000Z" });
    await w.closed("question", "q_1", "cancelled");
    const entries = await all(name);
    expect(entries.map(({ seq: _s, ts: _t, ...rest }) => rest)).toEqual([
      { kind: "head-changed", threadId: head, head },
      { kind: "head-changed", threadId: head, head: null },
      { kind: "policy-changed", threadId: null, policy: { defaults: { permissions: "allow" } } },
      { kind: "approval-opened", threadId: head, approvalId: "appr_1", turnId: "turn_1", threadSeq: 4, name: "shell", input: { command: "ls" }, openedAt: opened.openedAt },
      { kind: "approval-resolved", threadId: head, approvalId: "appr_1", decision: "allow" },
      { kind: "question-opened", threadId: head, requestId: "q_1", turnId: "turn_1", threadSeq: 6, question: "why?", openedAt: opened.openedAt },
      { kind: "question-resolved", threadId: head, requestId: "q_1", action: "cancelled" },
    ]);
  });

  it("a wait that closed before the workspace heard it open is not left pending", async () => {
    const name = "feed-early-close";
    const w = ws(name);
    const thread = newThreadId();
    await w.closed("approval", "appr_early", "deny");
    await w.approvalOpened({ approvalId: "appr_early", threadId: thread, turnId: "turn_1", seq: 4, name: "shell", input: {}, openedAt: "2026-01-01T00:00:00.000Z" });
    expect(JSON.parse(await w.approvals())).toEqual([]);
    expect((await all(name)).map((e) => e.kind)).toEqual(["approval-opened", "approval-resolved"]);
    expect((await all(name))[1]).toMatchObject({ approvalId: "appr_early", decision: "deny" });
  });

  it("pages forward with nextAfter and backward with prevBefore, and answers the newest page without a cursor", async () => {
    const name = "feed-pages";
    for (let i = 0; i < 9; i++) await ws(name).threadChanged(summary(newThreadId(), 1));
    const first = await page(name, { after: 0, limit: 4 });
    expect(first.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(first).toMatchObject({ nextAfter: "4", hasMore: true });
    const last = await page(name, { after: 8, limit: 4 });
    expect(last).toMatchObject({ nextAfter: "9", hasMore: false });
    const empty = await page(name, { after: 9, limit: 4 });
    expect(empty).toMatchObject({ events: [], nextAfter: "9", hasMore: false });
    const newest = await page(name, { limit: 4 });
    expect(newest.events.map((e) => e.seq)).toEqual([9, 8, 7, 6]);
    expect(newest).toMatchObject({ prevBefore: "6", hasMore: true });
    const older = await page(name, { before: 3, limit: 4 });
    expect(older.events.map((e) => e.seq)).toEqual([2, 1]);
    expect(older).toMatchObject({ prevBefore: "1", hasMore: false });
    expect(await ws(name).page({ after: 10, limit: 4 })).toMatchObject({ ok: false, status: 400 });
    expect((await ws(name).fetch("https://workspace/events?after=10")).status).toBe(400);
    expect(await page("feed-never-written", { limit: 4 })).toEqual({ events: [], prevBefore: null, hasMore: false });
  });

  it("keeps only the newest entries, and a resume from a dropped cursor starts at the oldest kept", async () => {
    const name = "feed-prune";
    const stub = ws(name);
    const extra = 25;
    await runInDurableObject(stub, (instance: Workspace, state) => {
      const feed = (instance as unknown as { feed: WorkspaceFeed }).feed;
      state.storage.transactionSync(() => {
        for (let i = 0; i < FEED_RETAIN + extra; i++) feed.append("thread-restored", `t${i}`, {});
      });
      feed.markDurable();
      const kept = state.storage.sql.exec<{ n: number; oldest: number }>("SELECT count(*) AS n, min(seq) AS oldest FROM feed").one();
      expect(kept).toEqual({ n: FEED_RETAIN, oldest: extra + 1 });
    });
    const resumed = await page(name, { after: 3, limit: 2 });
    expect(resumed.events.map((e) => e.seq)).toEqual([extra + 1, extra + 2]);
    const oldest = await page(name, { before: extra + 3, limit: 10 });
    expect(oldest).toMatchObject({ prevBefore: String(extra + 1), hasMore: false });
    const frames = dataFrames(await readFrames(await open(name, "/events?after=0"), (f) => dataFrames(f).length >= 1));
    expect(frames[0]!.id).toBe(extra + 1);
  });

  it("follows from a cursor with ids = seq, catching up then live, each entry once", async () => {
    const name = "feed-follow";
    const ids = Array.from({ length: 6 }, () => newThreadId());
    for (const id of ids.slice(0, 3)) await ws(name).threadChanged(summary(id, 1));
    const reading = readFrames(await open(name, "/events?after=1"), (f) => dataFrames(f).length >= 5);
    for (const id of ids.slice(3)) await ws(name).threadChanged(summary(id, 1));
    const frames = dataFrames(await reading);
    expect(frames.map((f) => f.id)).toEqual([2, 3, 4, 5, 6]);
    expect(frames.every((f) => f.id === f.data.seq)).toBe(true);
    expect((frames[0]!.data as unknown as FeedEntry).threadId).toBe(ids[1]);
  });

  it("delivers each entry once to followers that open while batches are being committed", async () => {
    const name = "feed-follow-race";
    const writing = Array.from({ length: 120 }, () => ws(name).threadChanged(summary(newThreadId(), 1)));
    const seen = await idsSeenWhileWriting(() => open(name, "/events?after=0"), writing, 120);
    for (const ids of seen) expect(ids).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
  });

  it("carries only changes to threads on /changes, and only the named threads when asked", async () => {
    const name = "feed-changes";
    const [a, b] = [newThreadId(), newThreadId()];
    const everything = open(name, "/changes?after=0");
    const onlyA = open(name, `/changes?after=0&threads=${a}`);
    await ws(name).threadChanged(summary(a, 1));
    await ws(name).setPolicy(JSON.stringify({ defaults: {} }));
    await ws(name).threadChanged(summary(b, 1));
    await ws(name).threadChanged(summary(a, 2));
    const all = dataFrames(await readFrames(await everything, (f) => dataFrames(f).length >= 3));
    expect(all.map((f) => [f.id, (f.data as unknown as FeedEntry).threadId])).toEqual([[1, a], [3, b], [4, a]]);
    const mine = dataFrames(await readFrames(await onlyA, (f) => dataFrames(f).length >= 2));
    expect(mine.map((f) => f.id)).toEqual([1, 4]);
    // Resuming past the entries of other threads and other kinds skips them, with no gap.
    const resumed = dataFrames(await readFrames(await open(name, `/changes?after=1&threads=${b}`), (f) => dataFrames(f).length >= 1));
    expect(resumed.map((f) => f.id)).toEqual([3]);
  });

  it("frees a follower as soon as its client's request is aborted", async () => {
    const name = "feed-abort";
    const client = new AbortController();
    const stream = await open(name, "/events?after=0", client.signal);
    const reader = stream.getReader();
    await reader.read(); // the retry hint
    expect(await ws(name).subscriberCount()).toBe(1);
    client.abort();
    await waitFor(async () => (await ws(name).subscriberCount()) === 0, 250);
  });

  it("frees the follower when a client of the router goes away", async () => {
    const name = "feed-router-abort";
    const client = new AbortController();
    const res = await SELF.fetch(`https://runtime/workspaces/${name}/events`, { signal: client.signal });
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    const reader = res.body!.getReader();
    await reader.read();
    expect(await ws(name).subscriberCount()).toBe(1);
    client.abort();
    await waitFor(async () => (await ws(name).subscriberCount()) === 0, 250);
  });

  it("sends heartbeats on an idle stream", async () => {
    const frames = await readFrames(await open("feed-idle", "/events?after=0"), (f) => f.some((x) => x.startsWith(": heartbeat")), 3000);
    expect(frames[0]).toBe("retry: 2000");
  });
});
