import type * as MiniflareModule from "miniflare";
import type { Miniflare, MiniflareOptions } from "miniflare";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { ShardLayout } from "../../src/shared/shards.js";
import type { FrontConfig } from "./config.js";
import { freePort } from "./free-port.js";
import { shardDirs } from "./shard-layout.js";
import { bundleWorker } from "./worker-bundle.js";
import { readWorkerConfig, type WorkerConfig } from "./worker-config.js";

/**
 * Miniflare, required rather than imported. Its package is one CommonJS file of 3.7 MB:
 * an `import` of it runs Node's CommonJS lexer over the whole file to find its export
 * names, 0.45 s of the front's CPU and 25 MB at every start; `require` does not lex it.
 * Its 6.2 MB source map is not read either (source maps are off while it loads): Node 20
 * parses every loaded file's map when `--enable-source-maps` is on and keeps it, 0.1 s and
 * about 20 MB, for stacks through Miniflare's own frames, which then name its bundle's
 * lines instead of its TypeScript (docs/decisions.md, "Source maps: the front's own").
 */
const { Log, LogLevel, Miniflare: MiniflareClass } = (() => {
  const maps = process.sourceMapsEnabled;
  process.setSourceMapsEnabled(false);
  try {
    return createRequire(import.meta.url)("miniflare") as typeof MiniflareModule;
  } finally {
    process.setSourceMapsEnabled(maps);
  }
})();

/** One workerd process of the host. */
export interface Shard {
  mf: Miniflare;
  /** The worker's direct socket: a plain HTTP listener inside workerd, without Miniflare's entry worker. */
  direct: URL;
}

export interface Runtime {
  /** Shard 0 (home: the catalog, the Host object, the workspaces) first. */
  shards: Shard[];
  layout: ShardLayout;
  dispose(): Promise<void>;
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
  /** Shared secret for the worker's internal routes and the shards' peer calls. */
  internalToken: string;
  /** Shared secret the worker sends to the engine host. */
  enginesToken: string;
  /** host:port of the code service, for the CODE binding, and what it wants from its callers. */
  code: string;
  codeToken: string;
  /** Shared secret the worker sends to the account pool. */
  accountsToken: string;
}

/** The worker as wrangler.toml describes it, and its bundle. */
export interface PreparedWorker {
  workerOptions: WorkerConfig["workerOptions"];
  script: string;
}

/**
 * Reads wrangler.toml and the worker's bundle: the last start's when its sources are the
 * same, else a new one from esbuild's own process, while the front starts its services. A
 * failure is kept for `startRuntime` to throw, where the front starts workerd.
 */
export function prepareWorker(config: FrontConfig): Promise<PreparedWorker> {
  const worker = (async () => {
    const { workerOptions, main } = readWorkerConfig(join(config.projectDir, "wrangler.toml"));
    return { workerOptions, script: await bundleWorker(config.projectDir, main) };
  })();
  // A step that fails before startRuntime awaits it leaves nothing unhandled.
  worker.catch(() => undefined);
  return worker;
}

/**
 * The host as `layout.count` workerd processes running the same worker, each with its
 * own stores (docs/decisions.md, "Two workerd processes"). Each serves HTTP on a direct
 * socket and its ShardPeer entrypoint on a second one, which the other reaches through
 * its SHARD_PEER binding.
 */
export async function startRuntime(config: FrontConfig, boot: Boot, layout: ShardLayout, worker: Promise<PreparedWorker>): Promise<Runtime> {
  if (layout.count > 2) throw new Error(`the front runs at most two workerd processes, not ${layout.count}`);
  const { workerOptions, script } = await worker;
  const start = async (n: number, peerPorts: number[]): Promise<Shard> => {
    const dirs = shardDirs(n);
    const other = layout.count === 2 ? peerPorts[1 - n]! : null;
    const tag = layout.count > 1 ? `[workerd ${n}]` : "[workerd]";
    return startWorkerd({
      ...workerOptions,
      name: "agent-runtime",
      modules: [{ type: "ESModule", path: "worker.js", contents: script }],
      bindings: {
        ...workerOptions.bindings,
        BUILD: config.build,
        SERVICE_BOOT_ID: boot.bootId,
        SERVICE_INTERNAL_TOKEN: boot.internalToken,
        SERVICE_ENGINES_TOKEN: boot.enginesToken,
        SERVICE_CODE_TOKEN: boot.codeToken,
        SERVICE_ACCOUNTS_TOKEN: boot.accountsToken,
        SERVICE_SHARD: String(n),
        SERVICE_SHARD_COUNT: String(layout.count),
        SERVICE_SHARD_SINCE: String(layout.since),
        ...config.workerVars,
      },
      serviceBindings: {
        ...workerOptions.serviceBindings,
        ENGINES: { external: { address: boot.engines, http: {} } },
        ACCOUNTS: { external: { address: boot.accounts, http: {} } },
        CODE: { external: { address: boot.code, http: {} } },
        ...(other === null ? {} : { SHARD_PEER: { external: { address: `127.0.0.1:${other}`, http: {} } } }),
      },
      durableObjectsPersist: join(config.dataDir, dirs.objects),
      r2Persist: join(config.dataDir, dirs.blobs),
      cf: false,
      unsafeDirectSockets: [
        { host: "127.0.0.1", port: 0 },
        { host: "127.0.0.1", port: peerPorts[n]!, entrypoint: "ShardPeer" },
      ],
      log: new Log(LogLevel.WARN),
    }, "agent-runtime", tag);
  };
  for (let attempt = 1; ; attempt++) {
    const peerPorts = await Promise.all(Array.from({ length: layout.count }, () => freePort()));
    const started = await Promise.allSettled(Array.from({ length: layout.count }, (_, n) => start(n, peerPorts)));
    const shards = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (!failed) return { shards, layout, dispose: async () => void (await Promise.all(shards.map((s) => s.mf.dispose()))) };
    await Promise.all(shards.map((s) => s.mf.dispose().catch(() => {})));
    // A peer port was free when chosen and taken before workerd bound it (another process starting at once): choose again.
    if (attempt < 3 && failed.reason instanceof PortTaken) continue;
    throw failed.reason;
  }
}

/** workerd could not bind one of its sockets: another process holds the address. */
export class PortTaken extends Error {}

const ADDRESS_IN_USE = "Address already in use";

/**
 * Starts one workerd (Miniflare) and waits for `worker`'s direct socket, its output on the
 * front's stderr behind `tag`. A socket's address taken by another process is `PortTaken`,
 * told by workerd's own line. Miniflare looks for that line when workerd's control pipe
 * closes, but workerd's stderr may be read after that close: Miniflare then reports a bare
 * ERR_RUNTIME_FAILURE, and its dispose drops the unread line, so the front would say
 * nothing of why (one start in seven with the port taken, measured). So on a failed start
 * the stderr is read to its end (workerd has exited; its end comes within milliseconds)
 * before the dispose.
 */
export async function startWorkerd(options: MiniflareOptions, worker: string, tag: string): Promise<Shard> {
  let startup: string | null = "";
  let ended: Promise<unknown> = Promise.resolve();
  const mf = new MiniflareClass({
    ...options,
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (d: Buffer) => process.stderr.write(`${tag} ${d}`));
      stderr.on("data", (d: Buffer) => {
        if (startup !== null) startup += d;
        process.stderr.write(`${tag} ${d}`);
      });
      ended = new Promise((r) => (stderr.once("end", r), stderr.once("close", r)));
    },
  });
  try {
    const direct = await mf.unsafeGetDirectURL(worker);
    startup = null;
    return { mf, direct };
  } catch (err) {
    await Promise.race([ended, new Promise((r) => setTimeout(r, 2000).unref())]);
    await mf.dispose().catch(() => {});
    if (startup?.includes(ADDRESS_IN_USE) || (err as { code?: string } | null)?.code === "ERR_ADDRESS_IN_USE")
      throw new PortTaken(`workerd could not bind its socket: ${/Address already in use.*/.exec(startup ?? "")?.[0] ?? ADDRESS_IN_USE}`);
    throw err;
  }
}
