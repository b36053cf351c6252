import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";

export interface AppEnv {
  Bindings: Env;
  Variables: { config: RuntimeConfig };
}
