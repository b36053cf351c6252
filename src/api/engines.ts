/** An entry of `GET /accounts` `engines`: what each engine runs on, and whether it can run here. */
export interface EngineEntry {
  engine: "pi" | "engine_a" | "engine_b";
  binary: string | null;
  versionFound: string | null;
  versionNeeded: string | null;
  available: boolean;
  /** Why it is not available. */
  reason: string | null;
}

/** Every state `/health` may give the sandbox: `unknown` when the engine host did not answer. */
export const SANDBOX_STATES = ["bwrap", "off", "unavailable", "unknown"] as const;

/** The session sandbox as `/health` reports it: when it is not `bwrap`, why, and what an operator does about it. */
export interface SandboxReport {
  state: (typeof SANDBOX_STATES)[number];
  reason?: string;
  remedy?: string;
}

/** The engine host's `GET /volume`: the data directory's volume, measured when asked. */
export interface VolumeState {
  freeBytes: number;
  totalBytes: number;
}

/** The engine host's `GET /engines`: what each engine runs on, and the sandbox they run in. */
export interface EngineHostState {
  engines: EngineEntry[];
  sandbox: SandboxReport;
}
