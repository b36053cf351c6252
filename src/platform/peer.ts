import type { Env } from "./env.js";

/** The object namespaces a shard may reach on the other one. */
export type ShardNamespace = "THREAD" | "CATALOG" | "HOST" | "WORKSPACE" | "ROOM";

/** The calls a ShardPeer answers, as this side makes them. */
interface PeerCalls {
  call(token: string, ns: ShardNamespace, name: string, method: string, args: unknown[]): Promise<unknown>;
  noteDrain(token: string, status: unknown): Promise<void>;
  routeStats(token: string): Promise<unknown>;
}

/** The other process's entrypoint and the token it wants; null when this process is the whole host. */
export function shardPeer(env: Env): { peer: PeerCalls; token: string } | null {
  if (!env.SHARD_PEER) return null;
  return { peer: env.SHARD_PEER as unknown as PeerCalls, token: env.SERVICE_INTERNAL_TOKEN ?? "" };
}

/** How long a router waits on the other process for something it can do without (the drain push, timings). */
export const PEER_PATIENCE_MS = 2000;

/** `p`, or null once `ms` pass first; a failure is logged and also null. */
export async function orNull<T>(p: Promise<T>, ms: number, what: string): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    const value = await Promise.race([p, late]);
    if (value === null) console.error(`${what}: the other workerd process did not answer within ${ms} ms`);
    return value;
  } catch (err) {
    console.error(`${what}: ${(err as Error).message}`);
    return null;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
