import { CODES } from "../api/errors.js";
import { Hono } from "hono";
import { SpawnSpec } from "../api/threads.js";
import type { AppEnv } from "../http/app-env.js";
import { hostOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";
import { openApiText } from "../http/openapi.js";
import type { MemoryAlert } from "../api/memory.js";
import type { SandboxReport } from "../api/engines.js";
import { ENGINE_HOST_SILENT, engineHostState } from "../platform/engine-list.js";
import type { StorageState } from "../api/operator.js";
import { noteStorageState } from "../http/storage-watch.js";
import { serve } from "../http/serve.js";

/** Each spawn field with its accepted values (enums) or its type, read off the schema itself. */
function describeSpawnFields(): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {};
  for (const [name, field] of Object.entries(SpawnSpec.shape)) {
    const inner = field.unwrap();
    out[name] = "options" in inner ? (inner.options as readonly string[]) : inner.type === "record" ? "object of strings" : inner.type;
  }
  return out;
}

const SPAWN_FIELDS = describeSpawnFields();

export const health = new Hono<AppEnv>();

/** What /health says of sessions when the engine host is silent: nothing is known of them. */
const UNKNOWN_SANDBOX: SandboxReport = { state: "unknown", reason: ENGINE_HOST_SILENT, remedy: "start the runtime with `npm start`" };

serve(health, "GET /health", async (c) => {
  // A retain that could not be stored, per workspace, until a later one is (docs/memory.md).
  // Health answers even when the Host does not: then it says the alerts are unknown.
  const [alerts, host, storage] = await Promise.all([
    hostOf(c.env)
      .memoryAlerts()
      .then((text) => JSON.parse(text) as MemoryAlert[])
      .catch(() => null),
    engineHostState(c.env),
    hostOf(c.env)
      .storageState()
      .catch((): StorageState => ({ state: "unknown" })),
  ]);
  noteStorageState(storage);
  // `ok` is that the runtime serves: a missing sandbox is said beside it, not by it (docs/decisions.md).
  return c.json({
    ok: true,
    build: c.var.config.build,
    sandbox: host?.sandbox ?? UNKNOWN_SANDBOX,
    engines: host?.engines.map(({ engine, available, reason }) => ({ engine, available, reason })) ?? null,
    spawn: { fields: SPAWN_FIELDS },
    // A full volume refuses writes (507) while reads go on: said beside `ok`, like the sandbox.
    storage,
    memoryAlert: alerts?.[0] ?? null,
    memoryAlerts: alerts,
    ...(alerts ? {} : { memoryAlertsUnknown: true }),
  });
});

/** The HTTP interface as OpenAPI 3.1, generated from the schemas the router validates with. */
serve(health, "GET /openapi.json", (c) => c.body(openApiText(c.var.config.build), 200, { "content-type": "application/json; charset=utf-8" }));

serve(health, "GET /incidents", async (c) => {
  const raw = c.req.query("since");
  if (raw !== undefined && !/^\d{1,16}$/.test(raw)) refused(400, `since must be epoch milliseconds, not ${JSON.stringify(raw)}`, CODES.invalidQuery);
  const since = raw === undefined ? 0 : Number(raw);
  return c.json({ since, windowHours: 24, incidents: await hostOf(c.env).incidents(since) });
}, ["query"]);
