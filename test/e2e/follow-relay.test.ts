import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { openFollow, seqs, until } from "../support/sse.js";

// The same behaviour must hold whether the front relays follow streams or workerd serves each one.
describe.each([
  ["relayed by the front", "on"],
  ["served by workerd", "off"],
])("follow %s", (_name, relay) => {
  let front: Front;
  beforeAll(async () => {
    front = await startFront({ env: { SERVICE_FOLLOW_RELAY: relay, SERVICE_SSE_HEARTBEAT_MS: "400" } });
  });
  afterAll(async () => {
    await front.stop();
    removeDir(front.dataDir);
  });

  it("gives followers joining at different cursors, during a burst, every event once and in order", async () => {
    const { threadId } = await front.client.spawn();
    for (let i = 0; i < 10; i++) await front.client.post(threadId, { text: `early ${i}`, hold: true });
    const first = await openFollow(front.url, `/threads/${threadId}/follow?after=5`);
    const posting = Promise.all(Array.from({ length: 40 }, (_, i) => front.client.post(threadId, { text: `burst ${i}`, hold: true })));
    const joiners = await Promise.all([
      openFollow(front.url, `/threads/${threadId}/follow?after=0`),
      openFollow(front.url, `/threads/${threadId}/follow`, { "last-event-id": "8" }),
      openFollow(front.url, `/threads/${threadId}/follow?after=11`),
    ]);
    await posting;
    const late = await openFollow(front.url, `/threads/${threadId}/follow?after=30`);
    const all = [first, ...joiners, late];
    const starts = [5, 0, 8, 11, 30];
    await until(() => all.every((f) => seqs(f).at(-1) === 51));
    // The relay answers with connection: close; workerd streams with chunked encoding.
    expect(first.headers["transfer-encoding"]).toBe(relay === "on" ? undefined : "chunked");
    all.forEach((f, i) => expect(seqs(f), `follower from ${starts[i]}`).toEqual(Array.from({ length: 51 - starts[i]! }, (_, k) => starts[i]! + k + 1)));
    for (const f of all) {
      expect(f.status).toBe(200);
      expect(f.headers["content-type"]).toMatch(/^text\/event-stream/);
      expect(f.headers["cache-control"]).toBe("no-cache, no-transform");
      expect(f.headers["x-accel-buffering"]).toBe("no");
      f.close();
    }
  });

  it("relays followers that arrive together, before its stream from workerd has opened", async () => {
    const { threadId } = await front.client.spawn();
    const together = await Promise.all(Array.from({ length: 20 }, () => openFollow(front.url, `/threads/${threadId}/follow?after=1`)));
    await front.client.post(threadId, { text: "one", hold: true });
    await until(() => together.every((f) => seqs(f).at(-1) === 2));
    for (const f of together) {
      expect(seqs(f)).toEqual([2]);
      expect(f.headers["transfer-encoding"]).toBe(relay === "on" ? undefined : "chunked");
      f.close();
    }
  });

  it("gives hundreds of followers every event of a burst once and in order", async () => {
    const { threadId } = await front.client.spawn();
    const many: Awaited<ReturnType<typeof openFollow>>[] = [];
    for (let i = 0; i < 300; i += 50) many.push(...(await Promise.all(Array.from({ length: 50 }, () => openFollow(front.url, `/threads/${threadId}/follow?after=1`)))));
    await Promise.all(Array.from({ length: 30 }, (_, i) => front.client.post(threadId, { text: `burst ${i}`, hold: true })));
    await until(() => many.every((f) => seqs(f).at(-1) === 31));
    const expected = Array.from({ length: 30 }, (_, k) => k + 2);
    for (const f of many) {
      expect(seqs(f)).toEqual(expected);
      f.close();
    }
  });

  it("forwards refusals as the worker gave them", async () => {
    const unknowns = await Promise.all(Array.from({ length: 5 }, () => openFollow(front.url, "/threads/thr_0000000000000000000000000a/follow")));
    await until(() => unknowns.every((u) => u.body.length > 0));
    for (const unknown of unknowns) {
      expect(unknown.status).toBe(404);
      expect(JSON.parse(unknown.body)).toMatchObject({ code: "thread-not-found" });
    }
    const { threadId } = await front.client.spawn();
    const beyond = await openFollow(front.url, `/threads/${threadId}/follow?after=9`);
    await until(() => beyond.body.length > 0);
    expect(beyond.status).toBe(400);
    const bad = await openFollow(front.url, `/threads/${threadId}/follow`, { "last-event-id": "nope" });
    await until(() => bad.body.length > 0);
    expect(bad.status).toBe(400);
  });

  it("keeps heartbeats going on an idle stream", async () => {
    const { threadId } = await front.client.spawn();
    const f = await openFollow(front.url, `/threads/${threadId}/follow?after=1`);
    await until(() => f.frames.some((x) => x.startsWith(": heartbeat")), 5000);
    expect(f.frames[0]).toBe("retry: 2000");
    f.close();
  });

  it("serves a follower far behind the others from the log", async () => {
    const { threadId } = await front.client.spawn();
    for (let i = 0; i < 20; i++) await front.client.post(threadId, { text: `m${i}`, hold: true });
    const near = await openFollow(front.url, `/threads/${threadId}/follow?after=20`);
    await until(() => near.frames.length > 0);
    const far = await openFollow(front.url, `/threads/${threadId}/follow?after=0`);
    await front.client.post(threadId, { text: "new", hold: true });
    await until(() => seqs(far).at(-1) === 22 && seqs(near).at(-1) === 22);
    expect(seqs(far)).toEqual(Array.from({ length: 22 }, (_, k) => k + 1));
    expect(seqs(near)).toEqual([21, 22]);
    expect(near.headers["transfer-encoding"]).toBe(relay === "on" ? undefined : "chunked");
    expect(far.headers["transfer-encoding"]).toBe("chunked");
    near.close();
    far.close();
  });
});
