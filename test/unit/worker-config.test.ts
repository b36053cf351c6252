import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { readWorkerConfig } from "../../local-front/process/worker-config.js";
import { PROJECT_DIR } from "../support/front.js";

const TOML = join(PROJECT_DIR, "wrangler.toml");

describe("the local front's reading of wrangler.toml", () => {
  it("is what wrangler makes of the project's file, for everything the front runs", () => {
    const ours = readWorkerConfig(TOML);
    const theirs = unstable_getMiniflareWorkerOptions(TOML);
    expect(ours.main).toBe(theirs.main);
    const w = theirs.workerOptions;
    expect(ours.workerOptions).toEqual({
      compatibilityDate: w.compatibilityDate,
      compatibilityFlags: w.compatibilityFlags,
      bindings: w.bindings,
      r2Buckets: w.r2Buckets,
      durableObjects: w.durableObjects,
      serviceBindings: w.serviceBindings,
    });
    // Everything else wrangler fills is empty for this file: nothing the front would have run is left out.
    const rest = Object.entries(w).filter(([k, v]) => !(k in ours.workerOptions) && k !== "modulesRules" && !isEmpty(v));
    expect(rest).toEqual([]);
  });

  it("refuses a key it does not map, rather than running without it", () => {
    const dir = mkdtempSync(join(tmpdir(), "worker-config-"));
    const path = join(dir, "wrangler.toml");
    writeFileSync(path, `${readFileSync(TOML, "utf8")}\n[[kv_namespaces]]\nbinding = "CACHE"\nid = "x"\n`);
    expect(() => readWorkerConfig(path)).toThrow(/does not read kv_namespaces/);
  });
});

function isEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.length === 0;
  if (v && typeof v === "object") return Object.values(v).every(isEmpty);
  return v === undefined;
}
