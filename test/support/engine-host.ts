import { join } from "node:path";
import { AccountPool } from "../../local-front/bindings/accounts/pool.js";
import { TokenStore } from "../../local-front/bindings/accounts/token-store.js";
import { startEngineHost, type EngineHost } from "../../local-front/bindings/engines/engine-host.js";
import { Placeholders } from "../../local-front/bindings/proxy/placeholder.js";
import { providerUpstream } from "../../local-front/bindings/proxy/upstream.js";
import { Sandbox } from "../../local-front/bindings/sandbox/fence.js";
import { runtimePlaces } from "../../local-front/bindings/sandbox/runtime.js";
import { StartedProcesses } from "../../local-front/bindings/sandbox/started.js";

/**
 * The engine host alone, for a unit test of its routes: no account, no engine CLI, no
 * worker behind it, its state and scratch in `scratch`. Answers it with the pool and
 * placeholders it was given, for a test that serves the account pool beside it.
 */
export async function bareEngineHost(scratch: string, token: string): Promise<{ host: EngineHost; pool: AccountPool; placeholders: Placeholders }> {
  const pool = new AccountPool([], new TokenStore(join(scratch, "tokens.json")), providerUpstream(null), 1);
  const placeholders = new Placeholders(join(scratch, "ph.key"));
  const host = await startEngineHost(
    {
      network: { pool, placeholders, proxy: null, simulatorUrl: null },
      dataDir: scratch,
      scratchDir: scratch,
      stateDir: scratch,
      engineA: { engine: "engine_a", binary: null, versionFound: null, versionNeeded: null, available: false, reason: "not here" },
      engineB: { engine: "engine_b", binary: null, versionFound: null, versionNeeded: "0.160.0", available: false, reason: "not here" },
      proxyFailureSince: () => null,
      runtime: () => Promise.reject(new Error("no worker in this test")),
      codeRoots: [],
      sandbox: Sandbox.start("on", { hidden: [scratch], readable: [], runtime: runtimePlaces(join(import.meta.dirname, "../..")) }, new StartedProcesses(scratch), scratch),
    },
    token,
  );
  return { host, pool, placeholders };
}
