import type { RuntimeConfig } from "./config.js";
import type { Env } from "./env.js";

export interface AppEnv {
  Bindings: Env;
  Variables: { config: RuntimeConfig };
}
