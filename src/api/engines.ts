import * as z from "zod";
import { ENGINES } from "./threads.js";

/** An entry of `GET /accounts` `engines`: what each engine runs on, and whether it can run here. */
export const EngineEntry = z.object({
  engine: z.enum(ENGINES),
  binary: z.string().nullable(),
  versionFound: z.string().nullable(),
  versionNeeded: z.string().nullable(),
  available: z.boolean(),
  /** Why it is not available. */
  reason: z.string().nullable(),
});
export type EngineEntry = z.infer<typeof EngineEntry>;

/** Every state `/health` may give the sandbox: `unknown` when the engine host did not answer. */
export const SANDBOX_STATES = ["bwrap", "off", "unavailable", "unknown"] as const;

/** The session sandbox as `/health` reports it: when it is not `bwrap`, why, and what an operator does about it. */
export const SandboxReport = z.object({ state: z.enum(SANDBOX_STATES), reason: z.string().optional(), remedy: z.string().optional() });
export type SandboxReport = z.infer<typeof SandboxReport>;

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
