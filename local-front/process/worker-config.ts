import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { WorkerOptions } from "miniflare";
import { parse } from "smol-toml";

/** The worker as wrangler.toml describes it: what miniflare needs of it, and its entry. */
export interface WorkerConfig {
  main: string;
  workerOptions: Pick<WorkerOptions, "compatibilityDate" | "compatibilityFlags" | "bindings" | "r2Buckets" | "durableObjects" | "serviceBindings">;
}

/** The keys of wrangler.toml this reader maps; any other is refused rather than ignored. */
const KNOWN = new Set(["name", "main", "compatibility_date", "compatibility_flags", "vars", "durable_objects", "services", "r2_buckets", "migrations"]);

type Table = Record<string, unknown>;

/**
 * Reads wrangler.toml for the local front without loading wrangler: importing wrangler
 * cost the front 1.5 to 2.5 s of CPU at every start (docs/performance.md, "Issue 32:
 * start-up") to read a file of a few tables. `wrangler deploy` still reads the same file
 * itself, and `test/unit/worker-config.test.ts` holds this reader's answer to wrangler's
 * `unstable_getMiniflareWorkerOptions` for it. A key this reader does not map throws, so
 * a binding added to the file is never silently missing from the local runtime.
 */
export function readWorkerConfig(tomlPath: string): WorkerConfig {
  const toml = parse(readFileSync(tomlPath, "utf8")) as Table;
  const unknown = Object.keys(toml).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) throw new Error(`${tomlPath}: the local front does not read ${unknown.join(", ")} (local-front/process/worker-config.ts maps what it runs)`);
  const sqlite = new Set(((toml.migrations ?? []) as Table[]).flatMap((m) => (m.new_sqlite_classes ?? []) as string[]));
  const objects = ((toml.durable_objects as Table | undefined)?.bindings ?? []) as { name: string; class_name: string }[];
  return {
    main: resolve(dirname(tomlPath), String(toml.main ?? "src/index.ts")),
    workerOptions: {
      compatibilityDate: toml.compatibility_date as string,
      compatibilityFlags: (toml.compatibility_flags ?? []) as string[],
      bindings: (toml.vars ?? {}) as Record<string, string>,
      r2Buckets: Object.fromEntries(((toml.r2_buckets ?? []) as { binding: string; bucket_name: string }[]).map((b) => [b.binding, { id: b.bucket_name }])),
      durableObjects: Object.fromEntries(objects.map((o) => [o.name, { className: o.class_name, useSQLite: sqlite.has(o.class_name) }])),
      serviceBindings: Object.fromEntries(((toml.services ?? []) as { binding: string; service: string }[]).map((s) => [s.binding, { name: s.service }])),
    },
  };
}
