import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CommitQueue } from "../../objects/lib/commit-queue.js";
import type { BlobStore } from "../../objects/thread/log/blob-store.js";
import { EventLog } from "../../objects/thread/log/event-log.js";
import { newThread } from "./support.js";

async function inThreadStorage<T>(fn: (storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  const { stub } = await newThread();
  return runInDurableObject(stub, (_instance, state) => fn(state.storage));
}

describe("group commit", () => {
  it("shares one commit among writes that queue behind it, in arrival order", () =>
    inThreadStorage(async (storage) => {
      storage.sql.exec("CREATE TABLE q (n INTEGER)");
      let syncs = 0;
      const sync = storage.sync.bind(storage);
      storage.sync = () => (syncs++, sync());
      const queue = new CommitQueue(storage);
      const results = await Promise.all(Array.from({ length: 20 }, (_, n) => queue.write(() => (storage.sql.exec("INSERT INTO q VALUES (?)", n), n))));
      expect(results).toEqual(Array.from({ length: 20 }, (_, n) => n));
      // The first write commits alone; the 19 that queued behind it share the next commit.
      expect(syncs).toBe(2);
      expect(storage.sql.exec<{ n: number }>("SELECT n FROM q").toArray().map((r) => r.n)).toEqual(results);
    }));

  it("rejects only a write that throws, and leaves nothing of it behind", () =>
    inThreadStorage(async (storage) => {
      storage.sql.exec("CREATE TABLE r (n INTEGER)");
      const queue = new CommitQueue(storage);
      const outcomes = await Promise.allSettled([
        queue.write(() => storage.sql.exec("INSERT INTO r VALUES (1)")),
        queue.write(() => {
          storage.sql.exec("INSERT INTO r VALUES (2)");
          throw new Error("half-way");
        }),
        queue.write(() => storage.sql.exec("INSERT INTO r VALUES (3)")),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(storage.sql.exec<{ n: number }>("SELECT n FROM r ORDER BY n").toArray().map((r) => r.n)).toEqual([1, 3]);
    }));

  it("tells its owner of a write that threw, so a log gives its seq back and keeps no gap", () =>
    inThreadStorage(async (storage) => {
      // Small bodies never reach the blob store.
      const log = new EventLog(storage.sql, null as unknown as BlobStore, 65_536);
      const queue = new CommitQueue(storage, () => log.markDurable(), () => log.rolledBack());
      const before = log.lastSeq;
      const prepared = await log.prepare("message", { text: "x" });
      // As a full volume does: the event row is written, a later statement of the same write fails.
      await expect(
        queue.write(() => {
          log.commit(prepared);
          throw new Error("database or disk is full: SQLITE_FULL");
        }),
      ).rejects.toThrow(/SQLITE_FULL/);
      const next = await queue.write(() => log.commit(prepared));
      expect(next.seq).toBe(before + 1);
      expect(storage.sql.exec<{ seq: number }>("SELECT seq FROM events WHERE seq > ?", before).toArray().map((r) => r.seq)).toEqual([before + 1]);
    }));

  it("tells its owner a batch is durable before answering any write in it", () =>
    inThreadStorage(async (storage) => {
      const order: string[] = [];
      const sync = storage.sync.bind(storage);
      storage.sync = async () => {
        await sync();
        order.push("synced");
      };
      const queue = new CommitQueue(storage, () => order.push("durable"));
      await Promise.all([queue.write(() => order.push("a")), queue.write(() => order.push("b")), queue.write(() => order.push("c"))]);
      expect(order).toEqual(["a", "synced", "durable", "b", "c", "synced", "durable"]);
    }));

  it("answers no write before its batch is durable", () =>
    inThreadStorage(async (storage) => {
      const order: string[] = [];
      const sync = storage.sync.bind(storage);
      storage.sync = async () => {
        order.push("sync started");
        await sync();
        order.push("sync done");
      };
      const queue = new CommitQueue(storage);
      await queue.write(() => order.push("written"));
      order.push("answered");
      expect(order).toEqual(["written", "sync started", "sync done", "answered"]);
    }));
});
