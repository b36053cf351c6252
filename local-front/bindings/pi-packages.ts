import type * as PiAgentCore from "@mariozechner/pi-agent-core";
import type * as PiAi from "@mariozechner/pi-ai";

export interface PiPackages {
  ai: typeof PiAi;
  core: typeof PiAgentCore;
}

let loading: Promise<PiPackages> | null = null;

/**
 * pi-ai and pi-agent-core, loaded with the first `pi` turn or curator call: with typebox's
 * compiler they cost a start about 0.6 s of CPU (docs/performance.md, "Issue 32: start-up"),
 * which a front that runs no such turn never needs. The front is bundled with its packages
 * left as imports, so only an `import()` of the package itself keeps it out of the start.
 */
export function piPackages(): Promise<PiPackages> {
  if (!loading) {
    const started = Promise.all([import("@mariozechner/pi-ai"), import("@mariozechner/pi-agent-core")]).then(([ai, core]) => ({ ai, core }));
    // A load that failed is tried again by the next call, not remembered as failed.
    started.catch(() => (loading = null));
    loading = started;
  }
  return loading;
}
