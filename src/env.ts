import type { Catalog } from "../objects/catalog.js";
import type { Thread } from "../objects/thread.js";
import type { ConfigVars } from "./config.js";

export interface Env extends ConfigVars {
  THREAD: DurableObjectNamespace<Thread>;
  CATALOG: DurableObjectNamespace<Catalog>;
  BLOBS: R2Bucket;
}
