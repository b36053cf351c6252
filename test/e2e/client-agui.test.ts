import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyEvents, type BaseEvent } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeClient, RuntimeError, type AguiEvent, type AguiFrame, type StreamStatus } from "../../client/index.js";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { sim, waitFor } from "../support/http.js";

const fronts: Front[] = [];
let front: Front;
beforeAll(async () => {
  front = await startFront();
  fronts.push(front);
});
afterAll(async () => {
  for (const f of fronts) await f.stop().catch(() => {});
  for (const f of new Set(fronts.map((f) => f.dataDir))) removeDir(f);
});

/** Passes the events through the official client's verifier: it throws on a stream a frontend would reject. */
async function verified(events: AguiEvent[]): Promise<void> {
  await lastValueFrom(from(events as BaseEvent[]).pipe(verifyEvents(false), toArray()));
}

/** The events with each text message's (and tool call's) pieces joined: live text arrives in deltas, the log has it whole. */
function joined(events: AguiEvent[]): AguiEvent[] {
  const out: AguiEvent[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (e.type === "TEXT_MESSAGE_CONTENT" && last?.type === "TEXT_MESSAGE_CONTENT" && last.messageId === e.messageId) out[out.length - 1] = { ...last, delta: last.delta + e.delta };
    else out.push(e);
  }
  return out;
}

/** Follows until a frame with the seq `last` arrived, from a fresh connection: what one reader with no drop is sent. */
async function readTo(c: RuntimeClient, threadId: string, last: number): Promise<AguiFrame[]> {
  const stop = new AbortController();
  const frames: AguiFrame[] = [];
  for await (const f of c.followAgui(threadId, { signal: stop.signal })) {
    frames.push(f);
    if (f.seq === last) stop.abort();
  }
  return frames;
}

/**
 * The front a restart test restarts, on a port of its own (the client reconnects to the same
 * address): the one the previous restart test left running, else a new one. Every front
 * started costs the suite seconds; the restarts themselves are what these tests are about.
 * So the second test runs on the first's restarted front and data: a failure the first left
 * behind can show in the second, which then starts a front of its own only if none runs.
 */
let onPort: { front: Front; port: string } | null = null;
async function frontOnPort(): Promise<{ front: Front; port: string }> {
  if (onPort && onPort.front.proc.exitCode === null && onPort.front.proc.signalCode === null) return onPort;
  const port = String(await freePort());
  const front = await startFront({ env: { SERVICE_AGENTS_PORT: port } });
  fronts.push(front);
  return (onPort = { front, port });
}

async function lastSeq(c: RuntimeClient, threadId: string): Promise<number> {
  return (await c.tail(threadId, { before: "latest", limit: 1 })).events.at(-1)!.seq;
}

/**
 * Between the client and the front: passes everything, except that it ends the next AG-UI
 * stream at a chosen point, once: after `cut` frames of text, or inside a log event's
 * frames (after all its frames but the one with the id).
 */
let cut: { after: "text"; frames: number } | { after: "inside-a-group" } | null = null;
let proxy: Server;
let proxyUrl: string;
beforeAll(async () => {
  proxy = createServer((req, res) => {
    const target = /^\/threads\/[^/]+\/agui(\?|$)/.test(req.url!) && req.method === "GET" ? cut : null;
    const upstream = httpRequest(new URL(req.url!, front.url), { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      let text = 0;
      up.on("data", (chunk: Buffer) => {
        if (!target || cut !== target) return void res.write(chunk);
        const frames = chunk.toString("utf8").split("\n\n").slice(0, -1);
        if (target.after === "text") {
          text += frames.filter((f) => f.includes('"TEXT_MESSAGE_CONTENT"') && !f.includes("id: ")).length;
          if (text < target.frames) return void res.write(chunk);
        } else {
          // A group of frames whose last carries the id: pass all of them but that one.
          if (frames.length < 3 || !frames.at(-1)!.includes("id: ") || frames.slice(0, -1).some((f) => f.includes("id: "))) return void res.write(chunk);
          chunk = Buffer.from(frames.slice(0, -1).map((f) => `${f}\n\n`).join(""));
        }
        cut = null;
        up.destroy();
        res.write(chunk, () => res.destroy());
      });
      up.on("end", () => res.end());
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

describe("the client library's AG-UI calls", () => {
  it("runs with text through runAgui, and refuses before the stream with the code", async () => {
    const c = front.client;
    const { threadId } = await c.spawn();
    const run = await c.runAgui(threadId, { threadId, runId: "run-1", messages: [{ id: "u-1", role: "user", content: sim({ chunks: 6, delayMs: 10 }, "hello agui") }] });
    const frames: AguiFrame[] = [];
    for await (const f of run) frames.push(f);
    const events = frames.map((f) => f.event);
    expect(events[0]).toMatchObject({ type: "RUN_STARTED", threadId, runId: "run-1" });
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "run-1", outcome: { type: "success" } });
    const reply = events.find((e) => e.type === "TEXT_MESSAGE_START" && e.role === "assistant") as Extract<AguiEvent, { type: "TEXT_MESSAGE_START" }>;
    const text = events.flatMap((e) => (e.type === "TEXT_MESSAGE_CONTENT" && e.messageId === reply.messageId ? [e.delta] : []));
    expect(text.length).toBeGreaterThan(1);
    expect(text.join("")).toBe("echo: hello agui");
    await verified(events);
    // The seqs the frames carry are the log's: followAgui from the run's last reads on after it.
    expect(frames.at(-1)!.seq).toBe(await lastSeq(c, threadId));

    const refused = await c.runAgui(threadId, { threadId, runId: "run-2", messages: [] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RuntimeError);
    expect(refused).toMatchObject({ kind: "rejected", status: 400, code: "agui-nothing-to-run" });
    const missing = await c.runAgui("thr_00000000000000000000000000", { threadId, runId: "r", messages: [{ id: "u", role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ kind: "rejected", status: 404, code: "thread-not-found" });
  });

  it("pages the log backwards through aguiPage, as the route answers", async () => {
    const c = front.client;
    const { threadId } = await c.spawn();
    await c.send(threadId, { text: "paged" });
    const page = await c.aguiPage(threadId, { limit: 3 });
    expect(page.groups.length).toBeGreaterThan(0);
    expect(page.nextBefore).toBeGreaterThan(1);
    const older = await c.aguiPage(threadId, { before: page.nextBefore });
    expect(older.nextBefore).toBeUndefined();
    expect(Math.max(...older.groups.map((g) => g.seq))).toBeLessThan(page.nextBefore!);
  });

  it("follows across a front restart on the same port and data, with no gap and no duplicate", async () => {
    const { front: first, port } = await frontOnPort();
    const c = new RuntimeClient({ baseUrl: first.url, pollMs: 100 });
    const { threadId } = await c.spawn();
    await c.send(threadId, { text: sim({ chunks: 4 }, "before") });
    await c.post(threadId, { text: "held before", hold: true });

    const statuses: StreamStatus[] = [];
    const frames: AguiFrame[] = [];
    const stop = new AbortController();
    const following = (async () => {
      for await (const f of c.followAgui(threadId, { signal: stop.signal, onStatus: (s) => statuses.push(s) })) frames.push(f);
    })();
    const before = await lastSeq(c, threadId);
    await waitFor(async () => frames.some((f) => f.seq === before));
    expect(await first.stop()).toBe(0);

    const second = await startFront({ dataDir: first.dataDir, env: { SERVICE_AGENTS_PORT: port } });
    fronts.push(second);
    onPort = { front: second, port };
    await c.send(threadId, { text: sim({ chunks: 4 }, "after") });
    await c.post(threadId, { text: "held after", hold: true });
    const last = await lastSeq(c, threadId);
    await waitFor(async () => frames.some((f) => f.seq === last), 30_000);
    stop.abort();
    await following;

    expect(statuses[0]).toBe("live");
    expect(statuses).toContain("lost");
    expect(statuses.at(-1)).toBe("live");
    const seqs = frames.flatMap((f) => (f.seq === null ? [] : [f.seq]));
    expect(new Set(seqs).size).toBe(seqs.length);
    const once = await readTo(c, threadId, last);
    expect(seqs).toEqual(once.flatMap((f) => (f.seq === null ? [] : [f.seq])));
    expect(joined(frames.map((f) => f.event))).toEqual(joined(once.map((f) => f.event)));
    await verified(frames.map((f) => f.event));
  });

  it("follows across a front restart in the middle of a streamed reply, and the stream stays one the official client accepts", async () => {
    const { front: first, port } = await frontOnPort();
    const c = new RuntimeClient({ baseUrl: first.url, pollMs: 100 });
    const { threadId } = await c.spawn();
    const frames: AguiFrame[] = [];
    const stop = new AbortController();
    const following = (async () => {
      for await (const f of c.followAgui(threadId, { signal: stop.signal })) frames.push(f);
    })();
    await c.post(threadId, { text: sim({ chunks: 60, delayMs: 100 }, "a reply the restart cuts in the middle of its text") });
    await waitFor(async () => frames.filter((f) => f.event.type === "TEXT_MESSAGE_CONTENT" && f.seq === null).length >= 3);
    expect(await first.stop()).toBe(0);
    const second = await startFront({ dataDir: first.dataDir, env: { SERVICE_AGENTS_PORT: port } });
    fronts.push(second);
    onPort = { front: second, port };
    const ended = await waitFor(async () => {
      const log = (await c.tail(threadId, { after: 0, limit: 1000 })).events;
      return log.find((e) => e.kind === "turn-ended" || e.kind === "turn-failed")?.seq;
    }, 60_000);
    await waitFor(async () => frames.some((f) => f.seq !== null && f.seq >= ended), 30_000);
    stop.abort();
    await following;
    await verified(frames.map((f) => f.event));
    const seqs = frames.flatMap((f) => (f.seq === null ? [] : [f.seq]));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("resumes in the middle of a streamed reply: the run is not started again and no text is repeated", async () => {
    const c = new RuntimeClient({ baseUrl: proxyUrl, pollMs: 100 });
    const { threadId } = await c.spawn();
    const statuses: StreamStatus[] = [];
    const frames: AguiFrame[] = [];
    const stop = new AbortController();
    cut = { after: "text", frames: 3 };
    const following = (async () => {
      for await (const f of c.followAgui(threadId, { signal: stop.signal, onStatus: (s) => statuses.push(s) })) frames.push(f);
    })();
    await waitFor(async () => statuses.includes("live"));
    await c.send(threadId, { text: sim({ chunks: 24, delayMs: 30 }, "a reply long enough to be cut in the middle") });
    const last = await lastSeq(c, threadId);
    await waitFor(async () => frames.some((f) => f.seq === last));
    stop.abort();
    await following;

    expect(cut).toBeNull();
    expect(statuses.slice(0, 3)).toEqual(["live", "lost", "live"]);
    const events = frames.map((f) => f.event);
    const once = (await readTo(front.client, threadId, last)).map((f) => f.event);
    const starts = (list: AguiEvent[]) => list.filter((e) => e.type === "RUN_STARTED" || e.type === "TEXT_MESSAGE_START");
    expect(starts(events)).toEqual(starts(once));
    await verified(events);
    expect(joined(events)).toEqual(joined(once));
  });

  it("resumes inside a log event's frames: those it already passed are not passed again", async () => {
    const c = new RuntimeClient({ baseUrl: proxyUrl, pollMs: 100 });
    const { threadId } = await c.spawn();
    const statuses: StreamStatus[] = [];
    const frames: AguiFrame[] = [];
    const stop = new AbortController();
    cut = { after: "inside-a-group" };
    const following = (async () => {
      for await (const f of c.followAgui(threadId, { after: 1, signal: stop.signal, onStatus: (s) => statuses.push(s) })) frames.push(f);
    })();
    await waitFor(async () => statuses.includes("live"));
    // While idle, a held message is a run of its own: RUN_STARTED, CUSTOM, RUN_FINISHED with the id.
    await c.post(threadId, { text: "held", hold: true });
    await c.post(threadId, { text: "held again", hold: true });
    const last = await lastSeq(c, threadId);
    await waitFor(async () => frames.some((f) => f.seq === last));
    stop.abort();
    await following;

    expect(cut).toBeNull();
    expect(statuses.slice(0, 3)).toEqual(["live", "lost", "live"]);
    const events = frames.map((f) => f.event);
    expect(events.map((e) => e.type)).toEqual(["RUN_STARTED", "CUSTOM", "RUN_FINISHED", "RUN_STARTED", "CUSTOM", "RUN_FINISHED"]);
    expect(frames.map((f) => f.seq)).toEqual([null, null, 2, null, null, 3]);
    await verified(events);
  });

  it("follows a thread that does not exist to a gone status", async () => {
    const statuses: StreamStatus[] = [];
    const frames: AguiFrame[] = [];
    for await (const f of front.client.followAgui("thr_00000000000000000000000000", { onStatus: (s) => statuses.push(s) })) frames.push(f);
    expect(statuses).toEqual(["gone"]);
    expect(frames).toEqual([]);
  });
});
