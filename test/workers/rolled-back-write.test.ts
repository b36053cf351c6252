import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Thread } from "../../objects/thread.js";
import type { Workspace } from "../../objects/workspace.js";
import { newThread } from "./support.js";


const FULL = "SQLITE_FULL: database or disk is full";

describe("a write the volume refuses midway", () => {
  it("leaves the Thread's state as it is on disk, so the refused change neither holds nor is saved by the next write", async () => {
    const { stub } = await newThread();
    await runInDurableObject(stub, async (t: Thread) => {
      const inner = t as unknown as { saveState(): void; state: { archivedAt: string | null } };
      const save = inner.saveState.bind(t);
      let refuse = true;
      // The event row is written, then the state's row is refused, as a volume that fills midway refuses it.
      inner.saveState = () => {
        if (refuse) {
          refuse = false;
          throw new Error(FULL);
        }
        save();
      };
      await expect(t.archive("refused")).rejects.toThrow(/SQLITE_FULL/);
      expect(inner.state.archivedAt ?? null).toBeNull();
      const archived = await t.archive("taken");
      expect(archived.ok).toBe(true);
      expect(inner.state.archivedAt).not.toBeNull();
    });
    const row = await stub.get();
    expect(row.ok && row.value.archivedAt).toBeTruthy();
  });

  it("leaves the Workspace's feed without the refused entry: the next entry takes its seq", async () => {
    const ws = env.WORKSPACE.get(env.WORKSPACE.idFromName(`rollback-${crypto.randomUUID()}`));
    await runInDurableObject(ws, async (w: Workspace) => {
      const inner = w as unknown as { commits: { write<T>(f: () => T): Promise<T> }; record(kind: string, threadId: string | null, body: unknown): void; feed: { lastSeq: number }; unpublished: unknown[] };
      const before = inner.feed.lastSeq;
      await expect(
        inner.commits.write(() => {
          inner.record("thread-restored", "thr_x", {});
          throw new Error(FULL);
        }),
      ).rejects.toThrow(/SQLITE_FULL/);
      expect(inner.feed.lastSeq).toBe(before);
      expect(inner.unpublished).toEqual([]);
      await inner.commits.write(() => inner.record("thread-restored", "thr_y", {}));
      expect(inner.feed.lastSeq).toBe(before + 1);
    });
  });
});
