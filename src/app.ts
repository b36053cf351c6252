import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./http/app-env.js";
import { allowedMethods } from "./http/allowed-methods.js";
import { CODES } from "./api/errors.js";
import { bodyLimit } from "./http/body-limit.js";
import { callerGate } from "./http/caller-gate.js";
import { readConfig, type RuntimeConfig } from "./platform/config.js";
import { Refused } from "./http/answer.js";
import { refuse } from "./api/outcome.js";
import { timings } from "./http/timings.js";
import { storageWatch } from "./http/storage-watch.js";
import { hidesItsCause, isWriteMethod, nearlyFull, storageFault, storageFullRefusal } from "./rules/storage-fault.js";
import { volumeNow } from "./platform/engine-list.js";
import { hostOf } from "./platform/stubs.js";
import { health } from "./routes/health.js";
import { drain } from "./routes/drain.js";
import { accounts } from "./routes/accounts.js";
import { completions } from "./routes/completions.js";
import { operator } from "./routes/operator.js";
import { attention } from "./routes/attention.js";
import { peers } from "./routes/peers.js";
import { previews } from "./routes/previews.js";
import { internal } from "./routes/internal.js";
import { memory } from "./routes/memory.js";
import { code } from "./routes/code.js";
import { codeHost } from "./routes/code-host.js";
import { threads } from "./routes/threads.js";
import { agui } from "./routes/agui.js";
import { turns } from "./routes/turns.js";
import { workspaces } from "./routes/workspaces.js";
import { seats } from "./routes/seats.js";
import { operations } from "./routes/operations.js";
import { rooms } from "./routes/rooms.js";

let cached: { vars: object; config: RuntimeConfig } | null = null;

export const app = new Hono<AppEnv>();

app.use(async (c, next) => {
  if (cached?.vars !== c.env) cached = { vars: c.env, config: readConfig(c.env) };
  c.set("config", cached.config);
  await next();
});

app.use(callerGate);
app.use(bodyLimit);
app.use(timings);
app.use(storageWatch);

app.route("/", health);
app.route("/", drain);
app.route("/", threads);
app.route("/", agui);
app.route("/", turns);
app.route("/", seats);
app.route("/", operations);
app.route("/", workspaces);
app.route("/", rooms);
app.route("/", memory);
app.route("/", code);
app.route("/", codeHost);
app.route("/", internal);
app.route("/", accounts);
app.route("/", completions);
app.route("/", operator);
app.route("/", attention);
app.route("/", peers);
app.route("/", previews);

let methodsOf: ((path: string) => string[]) | null = null;

app.notFound((c) => {
  const path = new URL(c.req.url).pathname;
  const build = c.var.config.build;
  methodsOf ??= allowedMethods(app.routes);
  const allow = methodsOf(path);
  if (c.req.method === "OPTIONS" && allow.length > 0) return new Response(null, { status: 204, headers: { allow: allow.join(", ") } });
  const r =
    allow.length === 0
      ? refuse(404, `no route for ${c.req.method} ${path}`, CODES.routeNotFound, { build })
      : refuse(405, `${c.req.method} is not served on ${path}; it serves ${allow.join(", ")}`, CODES.methodNotAllowed, { build, allow }, { allow: allow.join(", ") });
  return new Refused(r.status, r.body, r.headers).toResponse();
});

app.onError(async (err, c) => {
  if (err instanceof Refused) return err.toResponse();
  // hono's own refusals (a body its helpers could not read): plain 400-class, as the spec wants input errors.
  if (err instanceof HTTPException) return new Refused(err.status, { error: err.message || "bad request" }).toResponse();
  // A full volume, however it surfaced (an object's SQLite, R2, a binding): a condition, not a bug.
  // workerd's opaque error names no cause: a fault the Host holds open, or a volume the
  // engine host finds nearly full now, says what it was (the first write to meet a full
  // disk can be a spawn, whose new database is where workerd hides SQLITE_FULL).
  const writing = isWriteMethod(c.req.method);
  let volumeFull = false;
  let measured = "";
  if (writing && hidesItsCause(err)) {
    const [fault, volume] = await Promise.all([
      hostOf(c.env)
        .storageState()
        .then((s) => s.state === "full")
        .catch(() => false),
      volumeNow(c.env),
    ]);
    volumeFull = fault || nearlyFull(volume);
    if (nearlyFull(volume)) measured = `; the data volume has ${volume!.freeBytes} bytes free`;
  }
  const full = storageFault(err, writing, volumeFull);
  if (full) {
    const r = storageFullRefusal(full + measured);
    console.error(`${c.req.method} ${c.req.url} refused: ${full}`);
    return new Refused(r.status, r.body, r.headers).toResponse();
  }
  console.error(`${c.req.method} ${c.req.url} failed:`, err);
  return new Refused(500, { error: `internal error: ${(err as Error).message}`, code: CODES.internal }).toResponse();
});
