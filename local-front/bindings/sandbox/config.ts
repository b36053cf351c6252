import type { FrontConfig } from "../../process/config.js";
import type { SessionProxy } from "../engines/access.js";
import type { FencedPlaces } from "./fence.js";
import type { Needed } from "../../process/debian-packages.js";

/** What the sandbox runs on, installed at start when missing (SERVICE_SANDBOX_INSTALL). */
export const SANDBOX_PACKAGES: Needed[] = [{ command: "bwrap", pkg: "bubblewrap", purpose: "the session sandbox" }];

/**
 * The runtime's secrets, hidden from sessions: the data directory (accounts, OAuth tokens,
 * the proxy's CA key and placeholder key, every thread's store), the engine state (every
 * thread's engine sessions and CLI homes), and the accounts file and CA when they are kept
 * elsewhere. The CA certificate and trust bundle sessions are told to trust stay readable.
 */
export function fencedPlaces(config: FrontConfig, proxy: SessionProxy | null): FencedPlaces {
  return {
    hidden: [config.dataDir, config.engineStateDir, config.accountsPath, config.proxy.caPath],
    readable: [proxy?.caPath, proxy?.bundlePath].filter((p): p is string => Boolean(p)),
  };
}
