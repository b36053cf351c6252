import type { Catalog } from "../objects/catalog.js";
import type { Thread } from "../objects/thread.js";
import type { ConfigVars } from "./config.js";

export interface Env extends ConfigVars {
  THREAD: DurableObjectNamespace<Thread>;
  CATALOG: DurableObjectNamespace<Catalog>;
  BLOBS: R2Bucket;
}

/** The host's one Catalog object. */
export function catalogOf(env: Env) {
  return env.CATALOG.get(env.CATALOG.idFromName("host"));
}
