import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BlobStore } from "../../objects/thread/log/blob-store.js";
import { EventLog } from "../../objects/thread/log/event-log.js";
import { FollowHub } from "../../objects/lib/follow-hub.js";
import { dataFrames, idsSeenWhileWriting, newThread, readFrames, sse, value } from "./support.js";

describe("follow", () => {
  it("replays after the cursor, then delivers new events live, each once and in order", async () => {
    const { stub } = await newThread();
    for (let i = 0; i < 5; i++) value(await stub.postMessage({ text: `before ${i}`, hold: true }));
    const stream = (await sse(stub, "/follow?after=3")).body!;
    const reading = readFrames(stream, (f) => dataFrames(f).length >= 8);
    for (let i = 0; i < 5; i++) value(await stub.postMessage({ text: `after ${i}`, hold: true }));
    const frames = dataFrames(await reading);
    expect(frames.map((f) => f.id)).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    expect(frames.every((f) => f.id === f.data.seq)).toBe(true);
    expect(frames[3]!.data.body.text).toBe("after 0");
  });

  it("delivers each event once to followers that open while batches are being committed", async () => {
    const { stub } = await newThread();
    const posting = Array.from({ length: 120 }, (_, i) => stub.postMessage({ text: `m${i}`, hold: true }));
    const seen = await idsSeenWhileWriting(async () => (await sse(stub, "/follow?after=0")).body!, posting, 121);
    for (const ids of seen) expect(ids).toEqual(Array.from({ length: 121 }, (_, i) => i + 1));
  });

  it("never shows a follower an event that is not yet durable, so publishing it cannot repeat it", async () => {
    const { stub } = await newThread();
    await runInDurableObject(stub, async (_thread, state) => {
      const log = new EventLog(state.storage.sql, new BlobStore(env.BLOBS), 1 << 20);
      const hub = new FollowHub(log, 60_000);
      const write = (n: number) => log.commit({ kind: "message", text: JSON.stringify({ text: `m${n}` }), blob: null, bytes: null });
      for (let n = 2; n <= 5; n++) write(n);
      log.markDurable();
      const pending = write(6); // written, its batch not yet on disk
      const stream = hub.open(0);
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes("id: 5\n")) text += decoder.decode((await reader.read()).value, { stream: true });
      // The follower has finished catching up and gone live before its batch is published.
      while (hub.liveCount === 0) await new Promise((r) => setTimeout(r, 1));
      log.markDurable();
      hub.publish([pending]);
      // A later event: anything sent twice would arrive before it.
      const next = write(7);
      log.markDurable();
      hub.publish([next]);
      while (!text.includes("id: 7\n")) text += decoder.decode((await reader.read()).value, { stream: true });
      hub.close();
      const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });

  it("loses nothing for a reader that lags far behind a burst", async () => {
    const { stub } = await newThread();
    const stream = (await sse(stub, "/follow?after=0")).body!;
    const reader = stream.getReader();
    // A 20 KB body each: the burst passes the per-follower buffer while nobody reads.
    const big = "z".repeat(900);
    await Promise.all(Array.from({ length: 300 }, (_, i) => stub.postMessage({ text: `${i} ${big}`, hold: true })));
    const decoder = new TextDecoder();
    let text = "";
    const seen: number[] = [];
    while (seen.length < 301) {
      const { value: chunk, done } = await reader.read();
      if (done) break;
      text += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = text.indexOf("\n\n")) >= 0) {
        const frame = text.slice(0, cut);
        text = text.slice(cut + 2);
        if (frame.startsWith("id: ")) seen.push(Number(frame.slice(4, frame.indexOf("\n"))));
      }
    }
    await reader.cancel();
    expect(seen).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
  });

  it("sends a heartbeat comment on an idle stream", async () => {
    const { stub } = await newThread();
    const frames = await readFrames((await sse(stub, "/follow?after=1")).body!, (f) => f.some((x) => x.startsWith(": heartbeat")), 3000);
    expect(frames[0]).toBe("retry: 2000");
  });
});

/** Until the thread counts the stream reader just opened, so a delta published next reaches it. */
async function subscribed(stub: { subscriberCounts(): Promise<{ stream: number }> }): Promise<void> {
  while ((await stub.subscriberCounts()).stream === 0) await new Promise((r) => setTimeout(r, 1));
}

describe("stream (live deltas)", () => {
  it("delivers published deltas and never replays them", async () => {
    const { stub } = await newThread();
    await stub.publishDeltas([{ text: "too early" }]);
    const stream = (await sse(stub, "/stream")).body!;
    const reading = readFrames(stream, (f) => f.filter((x) => x.startsWith("event: delta")).length >= 2);
    await subscribed(stub);
    await stub.publishDeltas([{ text: "a" }, { text: "b" }]);
    const deltas = (await reading).filter((x) => x.startsWith("event: delta")).map((x) => JSON.parse(x.split("\n")[1]!.slice(6)));
    expect(deltas).toEqual([{ text: "a" }, { text: "b" }]);
  });

  it("drops a slow reader's oldest frames and reports the gap", async () => {
    const { stub } = await newThread();
    const stream = (await sse(stub, "/stream")).body!;
    const reader = stream.getReader();
    await reader.read(); // the retry hint
    await subscribed(stub);
    for (let i = 0; i < 20; i++) await stub.publishDeltas([{ n: i }]);
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes('"n":19')) text += decoder.decode((await reader.read()).value, { stream: true });
    await reader.cancel();
    const gap = /event: gap\ndata: (\{.*\})/.exec(text);
    expect(gap).not.toBeNull();
    const delivered = [...text.matchAll(/"n":(\d+)/g)].map((m) => Number(m[1]));
    // The queue holds 4 frames (test config) behind the one write in flight.
    expect(delivered.length).toBeLessThan(20);
    expect(delivered.slice(-4)).toEqual([16, 17, 18, 19]);
    expect(JSON.parse(gap![1]!).dropped + delivered.length).toBe(20);
  });

  it("refuses subscribers past the per-thread cap with 429", async () => {
    const { stub } = await newThread();
    const open = [(await sse(stub, "/stream")).body!, (await sse(stub, "/stream")).body!, (await sse(stub, "/stream")).body!];
    expect(await sse(stub, "/stream")).toMatchObject({ status: 429, json: { code: "stream-subscribers-full", limit: 3 } });
    // A reader that leaves is found by the next heartbeat (300 ms in tests) and frees its place.
    await open[0]!.cancel();
    let counts = await stub.subscriberCounts();
    for (let i = 0; i < 40 && counts.stream === 3; i++) {
      await new Promise((r) => setTimeout(r, 50));
      counts = await stub.subscriberCounts();
    }
    expect(counts.stream).toBe(2);
    expect((await sse(stub, "/stream")).status).toBe(200);
  });
});
