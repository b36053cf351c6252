import type { Catalog } from "../objects/catalog.js";
import type { Host } from "../objects/host.js";
import type { Thread } from "../objects/thread.js";
import type { Workspace } from "../objects/workspace.js";
import { DEFAULT_WORKSPACE } from "./api/turns.js";
import type { ConfigVars } from "./config.js";

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
}

/** The host's one Catalog object. */
export function catalogOf(env: Env) {
  return env.CATALOG.get(env.CATALOG.idFromName("host"));
}

/** The host's one Host object. */
export function hostOf(env: Env) {
  return env.HOST.get(env.HOST.idFromName("host"));
}

/** A workspace's object; threads spawned without a workspace belong to `default`. */
export function workspaceOf(env: Env, name: string | null) {
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name ?? DEFAULT_WORKSPACE));
}

export function threadOf(env: Env, id: string) {
  return env.THREAD.get(env.THREAD.idFromName(id));
}
