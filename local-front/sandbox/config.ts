import { join, resolve } from "node:path";
import { ConfigError, type FrontConfig } from "../config.js";
import type { SessionProxy } from "../engines/access.js";
import type { FencedPlaces } from "./fence.js";

/** SERVICE_SANDBOX: `on` (the default) fences every session with bubblewrap; `off` runs them unfenced. */
export function sandboxMode(env: NodeJS.ProcessEnv): "on" | "off" {
  const mode = env.SERVICE_SANDBOX || "on";
  if (mode !== "on" && mode !== "off") throw new ConfigError(`SERVICE_SANDBOX must be on or off, not ${JSON.stringify(mode)}`);
  return mode;
}

/**
 * The runtime's secrets, hidden from sessions: the data directory (accounts, OAuth tokens,
 * the proxy's CA key and placeholder key, every thread's store), the engine state (every
 * thread's engine sessions and CLI homes), and the accounts file and CA when they are kept
 * elsewhere. The CA certificate and trust bundle sessions are told to trust stay readable.
 */
export function fencedPlaces(accountsFile: string | undefined, config: FrontConfig, proxy: SessionProxy | null): FencedPlaces {
  return {
    hidden: [config.dataDir, config.engineStateDir, resolve(accountsFile || join(config.dataDir, "accounts.json")), config.proxy.caPath],
    readable: [proxy?.caPath, proxy?.bundlePath].filter((p): p is string => Boolean(p)),
  };
}
