import { DEFAULT_WORKSPACE } from "../api/turns.js";
import { shardOfThread } from "../shared/shards.js";
import { layoutOf, type Env } from "./env.js";
import { shardPeer, type ShardNamespace } from "./peer.js";

/** The stub of an object of namespace `K`, named through Env (whose types name the object classes). */
type StubOf<K extends ShardNamespace> = ReturnType<Env[K]["get"]>;

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

/** Home objects (catalog, Host, workspaces, rooms) live on shard 0. */
const away = (env: Env) => env.SHARD_PEER !== undefined && thisShard(env) !== 0;

/** The host's one Catalog object. */
export function catalogOf(env: Env) {
  if (away(env)) return remote<StubOf<"CATALOG">>(env, "CATALOG", "host");
  return env.CATALOG.get(env.CATALOG.idFromName("host"));
}

/** The host's one Host object. */
export function hostOf(env: Env) {
  if (away(env)) return remote<StubOf<"HOST">>(env, "HOST", "host");
  return env.HOST.get(env.HOST.idFromName("host"));
}

/** A workspace's object; threads spawned without a workspace belong to `default`. */
export function workspaceOf(env: Env, name: string | null) {
  if (away(env)) return remote<StubOf<"WORKSPACE">>(env, "WORKSPACE", name ?? DEFAULT_WORKSPACE);
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name ?? DEFAULT_WORKSPACE));
}

/** A review room's object (docs/rooms.md); rooms live home, beside their workspaces. */
export function roomOf(env: Env, id: string) {
  if (away(env)) return remote<StubOf<"ROOM">>(env, "ROOM", id);
  return env.ROOM.get(env.ROOM.idFromName(id));
}

export function threadOf(env: Env, id: string) {
  if (env.SHARD_PEER && shardOfThread(id, layoutOf(env)) !== thisShard(env)) return remote<StubOf<"THREAD">>(env, "THREAD", id);
  return env.THREAD.get(env.THREAD.idFromName(id));
}
