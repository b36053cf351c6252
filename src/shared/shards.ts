import { ALPHABET, isThreadId } from "./ids.js";

/**
 * How a host's threads are spread over its workerd processes (docs/decisions.md,
 * "Two workerd processes"). Shard 0 is home: it also holds the catalog, the Host object
 * and the workspaces. A thread whose id was made before `since` (ms) lived before the
 * host had shards and stays on shard 0; later ones are spread by a hash of their id.
 */
export interface ShardLayout {
  count: number;
  since: number;
}

/** The millisecond time a thread id carries. */
export function threadIdTime(id: string): number {
  let t = 0;
  for (let i = 4; i < 14; i++) t = t * 32 + ALPHABET.indexOf(id[i]!);
  return t;
}

/** The shard that holds thread `id`: deterministic, so every router and the front agree. */
export function shardOfThread(id: string, layout: ShardLayout): number {
  if (layout.count <= 1 || !isThreadId(id) || threadIdTime(id) < layout.since) return 0;
  // FNV-1a over the id: the random tail spreads it evenly.
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % layout.count;
}

const THREAD_PATH = /^\/threads\/([^/?#]+)/;

/** The shard a request is best served on: its thread's, for `/threads/:id/...`, else home. */
export function shardOfRequest(target: string, layout: ShardLayout): number {
  const m = THREAD_PATH.exec(target);
  return m ? shardOfThread(m[1]!, layout) : 0;
}
