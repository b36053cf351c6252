import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WakeItem } from "../../src/api/subscriptions.js";
import type { Thread } from "../../objects/thread.js";
import { dataFrames, newThread, readFrames, sse, value } from "./support.js";

type Stub = Awaited<ReturnType<typeof newThread>>["stub"];

const item = (seq: number): WakeItem => ({ seq, kind: "reply", excerpt: `reply ${seq}`, depth: 1 });

async function events(stub: Stub): Promise<{ seq: number; kind: string; body: any; blob?: unknown }[]> {
  return JSON.parse(value(await stub.page({ after: 0, limit: 1000, waitMs: 0 }))).events;
}

const seenRows = (stub: Stub) =>
  runInDurableObject(stub, (_t: Thread, state) => state.storage.sql.exec<{ watch: string; source: string; seq: number }>("SELECT watch, source, seq FROM wakes_seen ORDER BY watch, source, seq").toArray());

// A watched thread's delivery, as its outbox would make it (objects/thread/orchestration/watchers.ts), handed straight to the subscriber.
describe("wakes a subscriber takes", () => {
  it("writes a repeated delivery's wake for its new events only, the same in the log as a live follower saw, above the blob threshold", async () => {
    // The workers tests store bodies over 1,024 bytes apart: a long note makes every wake one.
    const { stub } = await newThread({ type: "external" });
    const sub = value(await stub.subscribe({ thread: "thr_watched" }, {}, "n".repeat(1500), null));
    expect(value(await stub.wake(sub.watch, "thr_watched", [item(2)]))).toEqual({ taken: 1 });
    const follower = (await sse(stub, `/follow?after=${value(await stub.get()).lastSeq}`)).body!;
    const live = readFrames(follower, (f) => dataFrames(f).some((d) => d.data.kind === "message"));
    // Delivered again with a newer event (its outbox was not emptied after the first): only #3 is new.
    expect(value(await stub.wake(sub.watch, "thr_watched", [item(2), item(3)]))).toEqual({ taken: 1 });
    const shown = dataFrames(await live).find((d) => d.data.kind === "message")!.data;
    const logged = (await events(stub)).find((e) => e.seq === shown.seq)!;
    expect(logged.blob).toBeDefined();
    expect(logged.body).toEqual(shown.body);
    expect(logged.body.wake.seqs).toEqual([3]);
    expect(logged.body.text).toContain("1 event on thread thr_watched");
    expect(logged.body.text).not.toContain("#2");
    // A third delivery of both takes nothing.
    expect(value(await stub.wake(sub.watch, "thr_watched", [item(2), item(3)]))).toEqual({ taken: 0 });
  });

  it("keeps one row of what it took per subscription and watched thread, and none once the subscription is removed", async () => {
    const { stub } = await newThread({ type: "external" });
    const a = value(await stub.subscribe({ workspace: "ws" }, {}, null, null));
    const b = value(await stub.subscribe({ thread: "thr_one" }, {}, null, null));
    for (let seq = 2; seq <= 30; seq += 2) {
      value(await stub.wake(a.watch, "thr_one", [item(seq), item(seq + 1)]));
      value(await stub.wake(a.watch, "thr_two", [item(seq)]));
      value(await stub.wake(b.watch, "thr_one", [item(seq)]));
    }
    expect(await seenRows(stub)).toEqual(
      [
        { watch: a.watch, source: "thr_one", seq: 31 },
        { watch: a.watch, source: "thr_two", seq: 30 },
        { watch: b.watch, source: "thr_one", seq: 30 },
      ].sort((x, y) => (x.watch + x.source < y.watch + y.source ? -1 : 1)),
    );
    // Each delivery was taken once: fifteen wakes a subscription and watched thread.
    expect((await events(stub)).filter((e) => e.kind === "message" && e.body.wake?.watch === a.watch)).toHaveLength(30);
    value(await stub.unsubscribe(a.watch));
    expect(await seenRows(stub)).toEqual([{ watch: b.watch, source: "thr_one", seq: 30 }]);
  });
});
