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
