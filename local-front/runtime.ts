import { Log, LogLevel, Miniflare } from "miniflare";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import type { FrontConfig } from "./config.js";
import { bundleWorker } from "./worker-bundle.js";

export interface Runtime {
  mf: Miniflare;
  /** The worker's direct socket: a plain HTTP listener inside workerd, without Miniflare's entry worker. */
  direct: URL;
}

/**
 * Starts workerd with the worker as wrangler.toml describes it (bindings, objects,
 * compatibility), persisting Durable Objects and blobs under the data directory.
 */
export interface Boot {
  /** host:port of the engine host, for the ENGINES binding. */
  engines: string;
  /** host:port of the account pool, for the ACCOUNTS binding. */
  accounts: string;
  /** Fresh each start: the incident window begins anew with it. */
  bootId: string;
  /** Shared secret for the worker's internal routes. */
  internalToken: string;
  /** Shared secret the worker sends to the engine host. */
  enginesToken: string;
  /** Shared secret the worker sends to the account pool. */
  accountsToken: string;
}

export async function startRuntime(config: FrontConfig, boot: Boot): Promise<Runtime> {
  const { workerOptions, main } = unstable_getMiniflareWorkerOptions(join(config.projectDir, "wrangler.toml"));
  const script = await bundleWorker(config.projectDir, main ?? "src/index.ts");
  const mf = new Miniflare({
    ...workerOptions,
    name: "agent-runtime",
    modules: [{ type: "ESModule", path: "worker.js", contents: script }],
    bindings: {
      ...workerOptions.bindings,
      BUILD: config.build,
      SERVICE_BOOT_ID: boot.bootId,
      SERVICE_INTERNAL_TOKEN: boot.internalToken,
      SERVICE_ENGINES_TOKEN: boot.enginesToken,
      SERVICE_ACCOUNTS_TOKEN: boot.accountsToken,
      ...config.workerVars,
    },
    serviceBindings: {
      ...workerOptions.serviceBindings,
      ENGINES: { external: { address: boot.engines, http: {} } },
      ACCOUNTS: { external: { address: boot.accounts, http: {} } },
    },
    durableObjectsPersist: join(config.dataDir, "do"),
    r2Persist: join(config.dataDir, "blobs"),
    cf: false,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    log: new Log(LogLevel.WARN),
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (d: Buffer) => process.stderr.write(`[workerd] ${d}`));
      stderr.on("data", (d: Buffer) => process.stderr.write(`[workerd] ${d}`));
    },
  });
  const direct = await mf.unsafeGetDirectURL("agent-runtime");
  return { mf, direct };
}
