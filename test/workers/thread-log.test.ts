import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Thread } from "../../objects/thread.js";
import { newThread, sse, stubOf, value } from "./support.js";

describe("the thread event log", () => {
  it("numbers events from 1 with no gaps, even when appends race", async () => {
    const { stub } = await newThread();
    const acks = await Promise.all(Array.from({ length: 50 }, (_, i) => stub.postMessage({ text: `m${i}`, hold: true })));
    const seqs = acks.map((a) => value(a).seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    const page = JSON.parse(value(await stub.page({ after: 0, limit: 1000, waitMs: 0 })));
    expect(page.events.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect(page.events[0].kind).toBe("spawn");
  });

  it("pages forward with nextAfter and backward with prevBefore", async () => {
    const { stub } = await newThread();
    for (let i = 0; i < 9; i++) value(await stub.postMessage({ text: `m${i}`, hold: true }));
    const first = JSON.parse(value(await stub.page({ after: 0, limit: 4, waitMs: 0 })));
    expect(first.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(first).toMatchObject({ nextAfter: "4", hasMore: true });
    const last = JSON.parse(value(await stub.page({ after: 8, limit: 4, waitMs: 0 })));
    expect(last).toMatchObject({ nextAfter: "10", hasMore: false });
    const newest = JSON.parse(value(await stub.page({ before: Number.MAX_SAFE_INTEGER, limit: 4, waitMs: 0 })));
    expect(newest.events.map((e: { seq: number }) => e.seq)).toEqual([10, 9, 8, 7]);
    expect(newest).toMatchObject({ prevBefore: "7", hasMore: true });
    const oldest = JSON.parse(value(await stub.page({ before: 3, limit: 4, waitMs: 0 })));
    expect(oldest).toMatchObject({ prevBefore: "1", hasMore: false });
  });

  it("refuses a cursor beyond the last event instead of silently skipping", async () => {
    const { stub } = await newThread();
    const refused = await stub.page({ after: 5, limit: 10, waitMs: 0 });
    expect(refused).toMatchObject({ ok: false, status: 400 });
    expect((await sse(stub, "/follow?after=5")).status).toBe(400);
  });

  it("holds a tail open until an event arrives when asked to wait", async () => {
    const { stub } = await newThread();
    const quiet = await newThread();
    const waiting = stub.page({ after: 1, limit: 10, waitMs: 5000 });
    // A wait on a thread where nothing happens answers only when it runs out.
    const sentinel = quiet.stub.page({ after: 1, limit: 10, waitMs: 2000 });
    value(await stub.postMessage({ text: "wake", hold: true }));
    const first = await Promise.race([waiting.then(() => "the event"), sentinel.then(() => "a wait running out")]);
    expect(first).toBe("the event");
    const page = JSON.parse(value(await waiting));
    expect(page.events.map((e: { seq: number }) => e.seq)).toEqual([2]);
    expect(JSON.parse(value(await sentinel)).events).toEqual([]);
    const empty = JSON.parse(value(await stub.page({ after: 2, limit: 10, waitMs: 150 })));
    expect(empty).toMatchObject({ events: [], nextAfter: "2", hasMore: false });
  });

  it("stores a body over the threshold apart, by its SHA-256, and reads it back whole", async () => {
    const { id, stub } = await newThread();
    const text = "x".repeat(5000);
    const { seq } = value(await stub.postMessage({ text, hold: true }));
    const page = JSON.parse(value(await stub.page({ after: seq - 1, limit: 1, waitMs: 0 })));
    expect(page.events[0].body.text).toBe(text);
    expect(page.events[0].blob.sha256).toMatch(/^[0-9a-f]{64}$/);
    const stored = await runInDurableObject(stubOf(id), (_: Thread, state) =>
      state.storage.sql.exec<{ body: string | null; blob: string }>("SELECT body, blob FROM events WHERE seq = ?", seq).one(),
    );
    expect(stored.body).toBeNull();
    const object = await env.BLOBS.get(`sha256/${stored.blob}`);
    expect(JSON.parse(await object!.text())).toEqual({ text, hold: true });
  });

  it("serves one tool result whole, and refuses other events", async () => {
    const { stub } = await newThread();
    const output = "line\n".repeat(1000);
    const { seq } = value(await stub.record("tool-result", { callId: "c1", name: "shell", output }));
    expect(JSON.parse(value(await stub.toolResult(seq)))).toMatchObject({ callId: "c1", output });
    expect(await stub.toolResult(1)).toMatchObject({ ok: false, status: 404, body: { code: "not-a-tool-result" } });
    expect(await stub.toolResult(99)).toMatchObject({ ok: false, status: 404 });
  });

  it("appends nothing when the blob store fails, and says so", async () => {
    const { id, stub } = await newThread();
    await runInDurableObject(stubOf(id), (thread: Thread) => {
      // Break the bucket this object writes large bodies to.
      (thread as unknown as { log: { blobs: { bucket: R2Bucket } } }).log.blobs.bucket = {
        put: () => Promise.reject(new Error("disk full")),
      } as unknown as R2Bucket;
    });
    const refused = await stub.postMessage({ text: "y".repeat(5000), hold: true });
    expect(refused).toMatchObject({ ok: false, status: 503, body: { code: "blob-store-unavailable" } });
    const page = JSON.parse(value(await stub.page({ after: 0, limit: 10, waitMs: 0 })));
    expect(page.events).toHaveLength(1);
  });

  it("answers a retried message with the same seq when the Idempotency-Key repeats", async () => {
    const { stub } = await newThread();
    const first = value(await stub.postMessage({ text: "once", hold: true }, "key-1"));
    const again = value(await stub.postMessage({ text: "once", hold: true }, "key-1"));
    expect(again).toMatchObject({ seq: first.seq, ts: first.ts, replayed: true });
    const other = await stub.postMessage({ text: "different", hold: true }, "key-1");
    expect(other).toMatchObject({ ok: false, status: 409, body: { code: "idempotency-conflict" } });
    const page = JSON.parse(value(await stub.page({ after: 0, limit: 10, waitMs: 0 })));
    expect(page.events).toHaveLength(2);
  });

  it("answers 404 for a thread that was never spawned", async () => {
    const stub = stubOf("thr_00000000000000000000000000");
    expect(await stub.get()).toMatchObject({ ok: false, status: 404, body: { code: "thread-not-found" } });
    expect(await stub.postMessage({ text: "x", hold: true })).toMatchObject({ ok: false, status: 404 });
  });
});

describe("held messages", () => {
  it("edits, releases and deletes a held message with events, and refuses once not held", async () => {
    const { stub } = await newThread();
    const held = value(await stub.postMessage({ text: "draft", hold: true }));
    expect(value(await stub.get()).heldMessages).toEqual([held.seq]);
    value(await stub.editHeld(held.seq, { text: "better draft" }));
    value(await stub.editHeld(held.seq, { hold: false }));
    expect(value(await stub.get()).heldMessages).toEqual([]);
    expect(await stub.editHeld(held.seq, { text: "late" })).toMatchObject({ ok: false, status: 409, body: { code: "message-not-held" } });
    expect(await stub.deleteHeld(held.seq)).toMatchObject({ ok: false, status: 409 });
    const other = value(await stub.postMessage({ text: "gone soon", hold: true }));
    value(await stub.deleteHeld(other.seq));
    expect(await stub.deleteHeld(999)).toMatchObject({ ok: false, status: 404, body: { code: "message-not-found" } });
    const page = JSON.parse(value(await stub.page({ after: 0, limit: 20, waitMs: 0 })));
    // The release also started a turn (its events interleave): the held text is what it answers.
    const turnKinds = new Set(["turn-started", "reply", "usage", "turn-ended"]);
    expect(page.events.map((e: { kind: string }) => e.kind).filter((k: string) => !turnKinds.has(k))).toEqual([
      "spawn",
      "message",
      "message-edited",
      "message-released",
      "message",
      "message-deleted",
    ]);
    expect(page.events[2].body).toEqual({ target: held.seq, text: "better draft" });
    const started = page.events.find((e: { kind: string }) => e.kind === "turn-started");
    expect(started.body.inputs).toEqual([held.seq]);
  });
});

describe("retire and restore", () => {
  it("appends one archive event, refuses new messages, and restores", async () => {
    const { stub } = await newThread();
    value(await stub.archive("done"));
    expect(value(await stub.get())).toMatchObject({ archived: true, archiveReason: "done" });
    expect(await stub.archive("again")).toMatchObject({ ok: false, status: 409, body: { code: "thread-archived" } });
    expect(await stub.postMessage({ text: "x", hold: true })).toMatchObject({ ok: false, status: 409, body: { code: "thread-archived" } });
    value(await stub.restore());
    expect(await stub.restore()).toMatchObject({ ok: false, status: 409, body: { code: "thread-not-archived" } });
    const page = JSON.parse(value(await stub.page({ after: 0, limit: 20, waitMs: 0 })));
    expect(page.events.filter((e: { kind: string }) => e.kind === "archive")).toHaveLength(1);
  });
});
