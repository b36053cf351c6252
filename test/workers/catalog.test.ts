import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ListThreadsFilter, ThreadListPage } from "../../src/api/threads.js";
import { catalogOf } from "../../src/platform/stubs.js";
import { waitFor } from "../support/wait-for.js";
import { newThread, value } from "./support.js";

const catalog = () => catalogOf(env);
const base: ListThreadsFilter = { limit: 50, after: null, sort: "created", archived: "live", seats: "open" };

describe("the thread catalog", () => {
  it("pages newest first without repeating or skipping while threads are created", async () => {
    const created: string[] = [];
    for (let i = 0; i < 10; i++) created.push((await newThread({ workspace: "paging" })).id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let round = 0; round < 10; round++) {
      const page: ThreadListPage = value(await catalog().list({ ...base, workspace: "paging", limit: 3, after }));
      seen.push(...page.threads.map((t) => t.id));
      // New threads arrive between pages: they sort before the first page, never into a later one.
      await newThread({ workspace: "paging" });
      if (!page.hasMore) break;
      after = page.nextAfter;
    }
    expect(seen).toEqual([...created].reverse());
  });

  it("filters by archive state, parent, role and seat lease", async () => {
    const a = await newThread({ workspace: "filters", role: "worker" });
    const b = await newThread({ workspace: "filters" });
    value(await b.stub.archive("old"));
    value(await a.stub.setSeatLease("seat-1"));
    const live = value(await catalog().list({ ...base, workspace: "filters" }));
    expect(live.threads.map((t) => t.id)).toEqual([a.id]);
    const all = value(await catalog().list({ ...base, workspace: "filters", archived: "all" }));
    expect(all.threads.map((t) => t.id).sort()).toEqual([a.id, b.id].sort());
    const archived = value(await catalog().list({ ...base, workspace: "filters", archived: "archived" }));
    expect(archived.threads.map((t) => t.id)).toEqual([b.id]);
    expect(value(await catalog().list({ ...base, workspace: "filters", role: "worker" })).threads).toHaveLength(1);
    expect(value(await catalog().list({ ...base, workspace: "filters", attached: true })).threads.map((t) => t.id)).toEqual([a.id]);
    expect(value(await catalog().list({ ...base, workspace: "filters", attached: false })).threads).toHaveLength(0);
  });

  it("refuses a cursor from another sort, and garbage", async () => {
    await newThread({ workspace: "cursors" });
    await newThread({ workspace: "cursors" });
    const page = value(await catalog().list({ ...base, workspace: "cursors", limit: 1 }));
    expect(await catalog().list({ ...base, sort: "recent", after: page.nextAfter })).toMatchObject({ ok: false, status: 400 });
    expect(await catalog().list({ ...base, after: "!!nope" })).toMatchObject({ ok: false, status: 400 });
  });

  it("learns of a thread's activity shortly after it happens", async () => {
    const { id, stub } = await newThread({ workspace: "activity" });
    for (let i = 0; i < 3; i++) value(await stub.postMessage({ text: `m${i}`, hold: true }));
    let summary = value(await catalog().list({ ...base, workspace: "activity" })).threads[0]!;
    for (let i = 0; i < 40 && summary.lastSeq < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      summary = value(await catalog().list({ ...base, workspace: "activity" })).threads[0]!;
    }
    expect(summary).toMatchObject({ id, lastSeq: 4 });
  });

  it("still learns of activity through the safety alarm when the in-memory push never ran", async () => {
    const { id, stub } = await newThread({ workspace: "alarm" });
    value(await stub.postMessage({ text: "before a crash", hold: true }));
    // As after a crash: the timer is gone, only the durable alarm remains.
    await runInDurableObject(stub, (thread) => {
      const sync = (thread as unknown as { catalog: { activityTimer: ReturnType<typeof setTimeout> | null } }).catalog;
      expect(sync.activityTimer).not.toBeNull();
      clearTimeout(sync.activityTimer!);
      sync.activityTimer = null;
    });
    expect(value(await catalog().list({ ...base, workspace: "alarm" })).threads[0]).toMatchObject({ id, lastSeq: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(value(await catalog().list({ ...base, workspace: "alarm" })).threads[0]).toMatchObject({ id, lastSeq: 2 });
  });

  it("leaves an idle thread no alarm once its activity reached the catalog, so nothing wakes it for it", async () => {
    const { id, stub } = await newThread({ workspace: "idle" });
    const alarm = () => runInDurableObject(stub, (_t, state) => state.storage.getAlarm());
    value(await stub.postMessage({ text: "once", hold: true }));
    await waitFor(async () => value(await catalog().list({ ...base, workspace: "idle" })).threads[0]?.lastSeq === 2);
    // The activity set the safety net's alarm; the push that covered it takes it away.
    await waitFor(async () => (await alarm()) === null, 3000);
    // And new activity sets it again, until its own push lands.
    value(await stub.postMessage({ text: "again", hold: true }));
    expect(await runInDurableObject(stub, (thread) => (thread as unknown as { alarms: { nextDueAt(): number | null } }).alarms.nextDueAt())).not.toBeNull();
    await waitFor(async () => value(await catalog().list({ ...base, workspace: "idle" })).threads[0]?.lastSeq === 3);
    await waitFor(async () => (await alarm()) === null, 3000);
    expect(value(await catalog().list({ ...base, workspace: "idle" })).threads[0]).toMatchObject({ id });
  });

  it("keeps the newest summary when an older one arrives late", async () => {
    const { id, stub } = await newThread({ workspace: "late" });
    value(await stub.archive("x"));
    const newer = value(await catalog().list({ ...base, workspace: "late", archived: "all" })).threads[0]!;
    await catalog().upsert({ ...newer, archived: false, lastSeq: 1 });
    const after = value(await catalog().list({ ...base, workspace: "late", archived: "all" })).threads[0]!;
    expect(after).toMatchObject({ id, archived: true, lastSeq: 2 });
  });
});
