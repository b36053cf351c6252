import { EventSource } from "eventsource";
import { afterAll, describe, expect, it } from "vitest";
import { parseEvents } from "../../client/index.js";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";

const fronts: Front[] = [];
afterAll(async () => {
  for (const f of fronts) await f.stop().catch(() => {});
  for (const f of fronts) removeDir(f.dataDir);
});

describe("follow over the front", () => {
  it("streams frame by frame with the SSE headers, ids = seq", async () => {
    // The subscriber cap is for the stream test below (a cap per thread, on `stream` readers only): one front serves both.
    const front = await startFront({ env: { SERVICE_SSE_HEARTBEAT_MS: "500", SERVICE_STREAM_SUBSCRIBERS: "2" } });
    fronts.push(front);
    const { threadId } = await front.client.spawn();
    const res = await fetch(`${front.url}/threads/${threadId}/follow?after=0`);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const events = parseEvents(res.body!);
    expect((await events.next()).value).toMatchObject({ seq: 1, kind: "spawn" });
    // The stream never ends: a frame that arrives proves nothing buffers it.
    await front.client.post(threadId, { text: "live", hold: true });
    expect((await events.next()).value).toMatchObject({ seq: 2, body: { text: "live" } });
    await events.return(undefined);
  });

  it("sends heartbeats on an idle stream", async () => {
    const front = fronts[0]!;
    const { threadId } = await front.client.spawn();
    const res = await fetch(`${front.url}/threads/${threadId}/follow?after=1`);
    const reader = res.body!.getReader();
    let text = "";
    const until = Date.now() + 5000;
    while (!text.includes(": heartbeat") && Date.now() < until) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain(": heartbeat");
  });

  it("answers a waiting tail as soon as an event lands", async () => {
    const front = fronts[0]!;
    const { threadId } = await front.client.spawn();
    const quiet = await front.client.spawn();
    const waiting = front.client.tail(threadId, { after: 1, wait: 20_000 });
    // A tail on a thread where nothing happens answers only when its own wait runs out.
    const sentinel = front.client.tail(quiet.threadId, { after: 1, wait: 5_000 });
    await front.client.post(threadId, { text: "now", hold: true });
    const first = await Promise.race([waiting.then(() => "the event"), sentinel.then(() => "a wait running out")]);
    expect(first).toBe("the event");
    expect((await waiting).events.map((e) => e.seq)).toEqual([2]);
    expect((await sentinel).events).toEqual([]);
  });

  it("resumes an EventSource across a runtime restart with Last-Event-ID, no gap and no duplicate", async () => {
    const port = String(await freePort());
    const first = await startFront({ env: { SERVICE_AGENTS_PORT: port } });
    const { threadId } = await first.client.spawn();
    for (let i = 0; i < 4; i++) await first.client.post(threadId, { text: `before ${i}`, hold: true });

    const seen: number[] = [];
    const source = new EventSource(`${first.url}/threads/${threadId}/follow?after=0`);
    source.onmessage = (m) => seen.push(Number(m.lastEventId));
    const waitFor = async (n: number) => {
      const until = Date.now() + 20_000;
      while (seen.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    };
    await waitFor(5);
    expect(await first.stop()).toBe(0);

    const second = await startFront({ dataDir: first.dataDir, env: { SERVICE_AGENTS_PORT: port } });
    fronts.push(second);
    for (let i = 0; i < 4; i++) await second.client.post(threadId, { text: `after ${i}`, hold: true });
    await waitFor(9);
    source.close();
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("follows with the client library from a stored cursor", async () => {
    const front = fronts[0]!;
    const { threadId } = await front.client.spawn();
    for (let i = 0; i < 3; i++) await front.client.post(threadId, { text: `m${i}`, hold: true });
    const controller = new AbortController();
    const got: number[] = [];
    for await (const e of front.client.follow(threadId, { after: 2, signal: controller.signal })) {
      got.push(e.seq);
      if (got.length === 2) controller.abort();
    }
    expect(got).toEqual([3, 4]);
  });
});

describe("stream over the front", () => {
  it("opens with SSE headers and refuses past the subscriber cap with 429", async () => {
    const front = fronts[0]!;
    const { threadId } = await front.client.spawn();
    const a = await fetch(`${front.url}/threads/${threadId}/stream`);
    const b = await fetch(`${front.url}/threads/${threadId}/stream`);
    expect(a.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(b.status).toBe(200);
    const c = await fetch(`${front.url}/threads/${threadId}/stream`);
    expect(c.status).toBe(429);
    expect(await c.json()).toMatchObject({ code: "stream-subscribers-full", limit: 2 });
    await a.body!.cancel();
    await b.body!.cancel();
  });
});
