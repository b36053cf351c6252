import type { Catalog } from "../../objects/catalog.js";
import type { Host } from "../../objects/host.js";
import type { Room } from "../../objects/room.js";
import type { Thread } from "../../objects/thread.js";
import type { Workspace } from "../../objects/workspace.js";
import type { ShardLayout } from "../shared/shards.js";
import type { ConfigVars } from "./config.js";

export interface Env extends ConfigVars {
  THREAD: DurableObjectNamespace<Thread>;
  CATALOG: DurableObjectNamespace<Catalog>;
  HOST: DurableObjectNamespace<Host>;
  WORKSPACE: DurableObjectNamespace<Workspace>;
  ROOM: DurableObjectNamespace<Room>;
  BLOBS: R2Bucket;
  /** The engine host (fetch-shaped; the local front serves it). See src/api/engine.ts. */
  ENGINES: Fetcher;
  /** The account pool (fetch-shaped; the local front serves it). See src/api/accounts.ts. */
  ACCOUNTS: Fetcher;
  /** The code service: the registered repositories, read on the machine that has them (fetch-shaped; the local front serves it). See src/api/code.ts. */
  CODE: Fetcher;
  /**
   * Set only by the local front, which runs the host as two workerd processes
   * (docs/decisions.md, "Two workerd processes"): the other process's ShardPeer
   * entrypoint. Absent on Cloudflare, where every object is reached through its namespace.
   */
  SHARD_PEER?: Fetcher;
}

export function layoutOf(env: Env): ShardLayout {
  return { count: Number(env.SERVICE_SHARD_COUNT ?? 1), since: Number(env.SERVICE_SHARD_SINCE ?? 0) };
}
