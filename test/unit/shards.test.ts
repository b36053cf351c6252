import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readShardLayout } from "../../local-front/process/shard-layout.js";
import { newThreadId } from "../../src/shared/ids.js";
import { shardOfRequest, shardOfThread, threadIdTime } from "../../src/shared/shards.js";

describe("which workerd process holds a thread", () => {
  const layout = { count: 2, since: 0 };

  it("reads the creation time back out of a thread id", () => {
    const at = Date.UTC(2026, 10, 22, 12, 0, 0, 123);
    expect(threadIdTime(newThreadId(at))).toBe(at);
  });

  it("spreads new threads over both shards, the same way every time", () => {
    const ids = Array.from({ length: 2000 }, () => newThreadId());
    const onOne = ids.filter((id) => shardOfThread(id, layout) === 1).length;
    expect(onOne).toBeGreaterThan(850);
    expect(onOne).toBeLessThan(1150);
    for (const id of ids.slice(0, 50)) expect(shardOfThread(id, layout)).toBe(shardOfThread(id, { ...layout }));
  });

  it("keeps threads made before the host had shards on shard 0, where their stores are", () => {
    const since = Date.UTC(2026, 10, 22);
    const before = Array.from({ length: 200 }, (_, i) => newThreadId(since - 1 - i * 1000));
    expect(before.every((id) => shardOfThread(id, { count: 2, since }) === 0)).toBe(true);
    const after = Array.from({ length: 200 }, (_, i) => newThreadId(since + i));
    expect(after.some((id) => shardOfThread(id, { count: 2, since }) === 1)).toBe(true);
  });

  it("sends thread routes to their thread's shard and everything else home", () => {
    const id = Array.from({ length: 100 }, () => newThreadId()).find((t) => shardOfThread(t, layout) === 1)!;
    expect(shardOfRequest(`/threads/${id}/messages`, layout)).toBe(1);
    expect(shardOfRequest(`/threads/${id}?x=1`, layout)).toBe(1);
    expect(shardOfRequest(`/threads/${id}`, layout)).toBe(1);
    for (const other of ["/threads", "/threads?limit=5", "/spawn", "/workspaces/a/events", "/threads/not-an-id/tail", "*", ""])
      expect(shardOfRequest(other, layout)).toBe(0);
  });

  it("fixes a data directory's layout once: everything spread when new, existing threads kept home", () => {
    const fresh = mkdtempSync(join(tmpdir(), "layout-"));
    expect(readShardLayout(fresh, 5000)).toEqual({ count: 2, since: 0 });
    expect(readShardLayout(fresh, 9000)).toEqual({ count: 2, since: 0 });
    const used = mkdtempSync(join(tmpdir(), "layout-"));
    mkdirSync(join(used, "do"));
    expect(readShardLayout(used, 5000)).toEqual({ count: 2, since: 5000 });
    expect(readShardLayout(used, 9000)).toEqual({ count: 2, since: 5000 });
    expect(JSON.parse(readFileSync(join(used, "shards.json"), "utf8"))).toEqual({ count: 2, since: 5000 });
  });

  it("refuses a directory whose threads were spread once but whose layout is gone", () => {
    const lost = mkdtempSync(join(tmpdir(), "layout-"));
    mkdirSync(join(lost, "do"));
    mkdirSync(join(lost, "do-1"));
    expect(() => readShardLayout(lost)).toThrow(/shards.json is missing, but .*do-1 holds threads of shard 1/);
  });
});
