import type { Env as RuntimeEnv } from "../../src/platform/env.js";

declare global {
  namespace Cloudflare {
    interface Env extends RuntimeEnv {}
  }
}
