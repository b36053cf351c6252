import type { Env as RuntimeEnv } from "../../src/env.js";

declare global {
  namespace Cloudflare {
    interface Env extends RuntimeEnv {}
  }
}
