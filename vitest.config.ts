import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { scriptedEngine } from "./test/workers/scripted-engine.js";

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        // Per-object tests: inside workerd, against the real SQLite-backed objects.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                SERVICE_AGENTS_BLOB_THRESHOLD: "1024",
                SERVICE_SSE_HEARTBEAT_MS: "300",
                SERVICE_STREAM_SUBSCRIBERS: "3",
                SERVICE_STREAM_BUFFER: "4",
                SERVICE_CATALOG_SYNC_MS: "100",
                SERVICE_INTERRUPT_GRACE_MS: "500",
                SERVICE_HANDOFF_TIMEOUT_MS: "90000",
                // The tests address the worker as https://runtime/.
                SERVICE_ALLOWED_HOSTS: "runtime",
              },
              // The account pool lives in the front; the per-object tests run without one.
              serviceBindings: { ENGINES: scriptedEngine, ACCOUNTS: () => Response.json({ error: "no account pool in the workers tests" }, { status: 404 }), CODE: () => Response.json({ error: "no code service in the workers tests" }, { status: 404 }) },
            },
          }),
        ],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"] },
      },
      {
        // Unit and end-to-end tests in Node: e2e starts the real front as a child process.
        test: {
          name: "node",
          include: ["test/unit/**/*.test.ts", "test/simulator/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["./test/support/debian-packages.ts", "./test/support/tool-packages.ts", "./test/support/front-bundle.ts", "./test/support/answer-document.ts"],
          // Three files at a time on two cores: an end-to-end file mostly waits on the fronts
          // and engines it starts. The front whose workerd once did not start at three was a
          // peer port another front took first, now chosen again (docs/performance.md, the suite's time).
          maxWorkers: 3,
          // Files share their worker's modules: each end-to-end file spent 1.5-1.7 s importing
          // the client and the contract's schemas, 177 s of the suite's CPU (docs/performance.md,
          // "the suite's time"). Each file starts its own fronts, and one that changes process state
          // (HOME, PATH, timers) puts it back in its own hooks.
          isolate: false,
          // Vitest runs projects with different worker counts one after the other, never in one group.
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
