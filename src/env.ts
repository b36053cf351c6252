import type { Catalog } from "../objects/catalog.js";
import type { Host } from "../objects/host.js";
import type { Thread } from "../objects/thread.js";
import type { Workspace } from "../objects/workspace.js";
import { DEFAULT_WORKSPACE } from "./api/turns.js";
import type { ConfigVars } from "./config.js";
import type { ShardNamespace } from "./shard-peer.js";
import { shardOfThread, type ShardLayout } from "./shards.js";

export interface Env extends ConfigVars {
  THREAD: DurableObjectNamespace<Thread>;
  CATALOG: DurableObjectNamespace<Catalog>;
  HOST: DurableObjectNamespace<Host>;
  WORKSPACE: DurableObjectNamespace<Workspace>;
  BLOBS: R2Bucket;
  /** The engine host (fetch-shaped; the local front serves it). See src/api/engine.ts. */
  ENGINES: Fetcher;
  /** The account pool (fetch-shaped; the local front serves it). See src/api/accounts.ts. */
  ACCOUNTS: Fetcher;
  /**
   * Set only by the local front, which runs the host as two workerd processes
   * (docs/decisions.md, "Two workerd processes"): this process's shard ("0" is home),
   * the layout, and the other process's ShardPeer entrypoint. Absent on Cloudflare, where
   * every object is reached through its namespace.
   */
  SERVICE_SHARD?: string;
  SERVICE_SHARD_COUNT?: string;
  SERVICE_SHARD_SINCE?: string;
  SHARD_PEER?: Fetcher;
}

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

export function layoutOf(env: Env): ShardLayout {
  return { count: Number(env.SERVICE_SHARD_COUNT ?? 1), since: Number(env.SERVICE_SHARD_SINCE ?? 0) };
}

const thisShard = (env: Env) => Number(env.SERVICE_SHARD ?? 0);

/**
 * A stub for an object the other process holds: each method call goes to it through
 * the peer entrypoint, which makes the same call on the real stub there. Arguments and
 * results cross as they would between two objects (structured clone, streams streamed).
 */
function remote<T>(env: Env, ns: ShardNamespace, name: string): T {
  const { peer, token } = shardPeer(env)!;
  return new Proxy({} as object, {
    get: (_target, method) =>
      typeof method === "string" && method !== "then" ? (...args: unknown[]) => peer.call(token, ns, name, method, args) : undefined,
  }) as T;
}

/** Home objects (catalog, Host, workspaces) live on shard 0. */
const away = (env: Env) => env.SHARD_PEER !== undefined && thisShard(env) !== 0;

/** The host's one Catalog object. */
export function catalogOf(env: Env) {
  if (away(env)) return remote<DurableObjectStub<Catalog>>(env, "CATALOG", "host");
  return env.CATALOG.get(env.CATALOG.idFromName("host"));
}

/** The host's one Host object. */
export function hostOf(env: Env) {
  if (away(env)) return remote<DurableObjectStub<Host>>(env, "HOST", "host");
  return env.HOST.get(env.HOST.idFromName("host"));
}

/** A workspace's object; threads spawned without a workspace belong to `default`. */
export function workspaceOf(env: Env, name: string | null) {
  if (away(env)) return remote<DurableObjectStub<Workspace>>(env, "WORKSPACE", name ?? DEFAULT_WORKSPACE);
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name ?? DEFAULT_WORKSPACE));
}

export function threadOf(env: Env, id: string) {
  if (env.SHARD_PEER && shardOfThread(id, layoutOf(env)) !== thisShard(env)) return remote<DurableObjectStub<Thread>>(env, "THREAD", id);
  return env.THREAD.get(env.THREAD.idFromName(id));
}
