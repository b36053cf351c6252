import { WorkerEntrypoint } from "cloudflare:workers";
import type { DrainStatus } from "./api/drain.js";
import { noteDrain } from "./http/drain-gate.js";
import { layoutOf, type Env } from "./platform/env.js";
import type { ShardNamespace } from "./platform/peer.js";
import { shardOfThread } from "./shared/shards.js";
import { routeStats, type RouteStats } from "./http/timings.js";

const NAMESPACES = new Set<string>(["THREAD", "CATALOG", "HOST", "WORKSPACE", "ROOM"]);

/**
 * What one workerd process of the local host offers the other (docs/decisions.md, "Two
 * workerd processes"): calls on its objects, and its router's memory. Served on a
 * loopback socket of its own; every call carries the boot's internal token, so another
 * local process cannot use it to reach objects past the routes' checks. Cloudflare never
 * serves it: there one namespace spans every machine.
 */
export class ShardPeer extends WorkerEntrypoint<Env> {
  private check(token: string): void {
    const want = this.env.SERVICE_INTERNAL_TOKEN ?? "";
    if (!want || token !== want) throw new Error("shard peer: wrong or missing token");
  }

  /** `method(...args)` on the object `name` of namespace `ns` in this process. */
  async call(token: string, ns: ShardNamespace, name: string, method: string, args: unknown[]): Promise<unknown> {
    this.check(token);
    if (!NAMESPACES.has(ns)) throw new Error(`shard peer: no namespace ${ns}`);
    // A caller that disagrees about where an object lives would create a stray store here.
    const here = Number(this.env.SERVICE_SHARD ?? 0);
    const owner = ns === "THREAD" ? shardOfThread(name, layoutOf(this.env)) : 0;
    if (owner !== here) throw new Error(`shard peer: ${ns} ${name} lives on shard ${owner}, not on shard ${here}`);
    const namespace = this.env[ns] as DurableObjectNamespace;
    const stub = namespace.get(namespace.idFromName(name)) as unknown as Record<string, (...a: unknown[]) => unknown>;
    // An RPC stub answers every property, and `stub[method].apply` would itself be a remote call: call it directly.
    return await stub[method]!(...args);
  }

  /** The drain as the other process's routes just armed or disarmed it. */
  noteDrain(token: string, status: DrainStatus): void {
    this.check(token);
    noteDrain(status);
  }

  /** This process's request timings, for `/timings` and `/metrics` on the other. */
  routeStats(token: string): [string, RouteStats][] {
    this.check(token);
    return routeStats();
  }
}
