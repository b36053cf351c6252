import type { FrontConfig } from "../../process/config.js";
import type { SessionProxy } from "../engines/access.js";
import type { FencedPlaces } from "./fence.js";
import type { Needed } from "../../process/debian-packages.js";
import { registeredPlaces } from "./registry.js";
import { worktreeHolding } from "../git/worktrees.js";

/** The runtime's secrets: the data directory, the engine state, and the accounts file and CA when they are kept elsewhere. */
export function secretPlaces(config: FrontConfig): string[] {
  return [config.dataDir, config.engineStateDir, config.accountsPath, config.proxy.caPath];
}

/** What the sandbox runs on, installed at start when missing (SERVICE_SANDBOX_INSTALL). */
export const SANDBOX_PACKAGES: Needed[] = [{ command: "bwrap", pkg: "bubblewrap", purpose: "the session sandbox" }];

/**
 * What sessions may not read: this runtime's secrets (accounts, OAuth tokens, the proxy's
 * CA key and placeholder key, every thread's store, engine sessions and CLI homes), and
 * every other runtime's on the host (registry.ts). The CA certificate and trust bundle
 * sessions are told to trust stay readable. What they may not change: the runtime's own
 * programs (runtime.ts).
 */
export function fencedPlaces(config: FrontConfig, proxy: SessionProxy | null): FencedPlaces {
  return {
    hidden: secretPlaces(config),
    others: registeredPlaces,
    readable: [proxy?.caPath, proxy?.bundlePath].filter((p): p is string => Boolean(p)),
    runtime: config.runtime,
    worktreeOf: (path) => worktreeHolding(config.dataDir, path),
  };
}
