import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ShardLayout } from "../../src/shared/shards.js";
import { ConfigError } from "./config.js";

/** workerd processes per host: two, because each commit holds its process until the disk has it (docs/decisions.md). */
export const SHARDS = 2;

/** Where shard `n` keeps its Durable Objects and blobs, under the data directory: shard 0 where the host always kept them. */
export function shardDirs(n: number): { objects: string; blobs: string } {
  return n === 0 ? { objects: "do", blobs: "blobs" } : { objects: `do-${n}`, blobs: `blobs-${n}` };
}

/**
 * The data directory's shard layout (`shards.json`), fixed the first time a host with
 * shards starts on it: a new directory spreads every thread; one that already holds
 * threads keeps them on shard 0, where their stores are, and spreads those made from
 * then on. The file never changes afterwards, so a thread's shard never does.
 */
export function readShardLayout(dataDir: string, now = Date.now()): ShardLayout {
  const path = join(dataDir, "shards.json");
  if (existsSync(path)) {
    const layout = JSON.parse(readFileSync(path, "utf8")) as Partial<ShardLayout>;
    if (!Number.isInteger(layout.count) || layout.count! < 1 || !Number.isFinite(layout.since))
      throw new ConfigError(`${path} is not a shard layout ({"count": n, "since": ms}): ${JSON.stringify(layout)}`);
    if (layout.count !== SHARDS) throw new ConfigError(`${path} spreads threads over ${layout.count} processes; this build runs ${SHARDS}`);
    return layout as ShardLayout;
  }
  // Without its layout, a directory that already spread threads cannot tell which are where.
  for (let n = 1; n < SHARDS; n++)
    if (existsSync(join(dataDir, shardDirs(n).objects)))
      throw new ConfigError(`${path} is missing, but ${join(dataDir, shardDirs(n).objects)} holds threads of shard ${n}: restore shards.json (a backup has it) before starting`);
  const layout: ShardLayout = { count: SHARDS, since: existsSync(join(dataDir, "do")) ? now : 0 };
  writeFileSync(`${path}.tmp`, JSON.stringify(layout) + "\n");
  renameSync(`${path}.tmp`, path);
  return layout;
}
