import "./process/launched-env.js";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, formerEngineStateDir, readFrontConfig, type FrontConfig } from "./process/config.js";
import { alive, DataDirBusy, DataLock, findWorkerdChildren } from "./process/data-lock.js";
import { FollowRelays } from "./front/follow-relay.js";
import { startPipe } from "./front/pipe.js";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { log, LogConfigError, logConfigRefusal } from "./process/log.js";
import { checkPort, portRefusal, PortUnavailable } from "./front/port-check.js";
import { findEngineA } from "./bindings/engines/engine-a/binary.js";
import { findEngineB } from "./bindings/engines/engine-b/binary.js";
import { startAccountService } from "./bindings/accounts/service.js";
import { startEngineHost } from "./bindings/engines/engine-host.js";
import type { RuntimeLink } from "./bindings/engines/tools/runtime-tools.js";
import { startHostReports } from "./bindings/host-report.js";
import { startCodeService } from "./bindings/code/service.js";
import { bindingSocket, newToken } from "./bindings/http.js";
import { startCodeHost } from "./code-host.js";
import { Worktrees } from "./bindings/git/worktrees.js";
import { spawn } from "node:child_process";
import { startNetwork } from "./network.js";
import { prepareWorker, startRuntime } from "./process/workerd.js";
import { readShardLayout } from "./process/shard-layout.js";
import { fencedPlaces, SANDBOX_PACKAGES, secretPlaces } from "./bindings/sandbox/config.js";
import { recordPlaces } from "./bindings/sandbox/registry.js";
import { scrubEnvironment } from "./bindings/sandbox/environment.js";
import { Sandbox } from "./bindings/sandbox/fence.js";
import { installMissing } from "./process/debian-packages.js";
import { collectWhenIdle } from "./process/idle-collect.js";
import { shardOfRequest, shardOfThread } from "../src/shared/shards.js";

/** How long a signalled front may take to close its connections, engines and workerd before it exits anyway. */
const STOP_LIMIT_MS = 15_000;

const projectDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const logRefused = logConfigRefusal();
  if (logRefused) throw logRefused;
  const config = readFrontConfig(process.env, projectDir);
  if (!process.env.SERVICE_ENGINE_STATE_DIR && config.engineStateDir === formerEngineStateDir())
    log.info(`engine state stays in ${config.engineStateDir}, where an earlier build kept it, so its threads resume; to keep it in the data directory, stop the front and move it to ${join(config.dataDir, "engine")}`);
  scrubEnvironment(process.env);
  const lock = new DataLock(config.dataDir);
  await lock.acquire();
  // What has started so far, stopped in reverse if a later step fails: a front that cannot
  // serve leaves no workerd, engine host or lock file behind.
  const undo: (() => Promise<unknown>)[] = [];
  try {
    await checkPort(config.host, config.port);
    await serve(config, lock, undo);
  } catch (err) {
    for (const close of undo.reverse()) await close().catch(() => undefined);
    lock.release();
    throw portRefusal(config.host, config.port, err as NodeJS.ErrnoException) ?? err;
  }
}

async function serve(config: FrontConfig, lock: DataLock, undo: (() => Promise<unknown>)[]): Promise<void> {
  const layout = readShardLayout(config.dataDir);
  // workerd starts while the front makes the services it calls: they need none of it, and
  // it needs only their addresses, taken here (what it asks of one before it serves waits).
  const sockets = { engines: await bindingSocket(), accounts: await bindingSocket(), code: await bindingSocket() };
  undo.push(() => Promise.all(Object.values(sockets).map((s) => s.close())));
  const enginesToken = newToken();
  const internalToken = newToken();
  const codeToken = newToken();
  const accountsToken = newToken();
  const starting = startRuntime(config, {
    engines: sockets.engines.address,
    accounts: sockets.accounts.address,
    bootId: randomBytes(8).toString("hex"),
    internalToken,
    enginesToken,
    accountsToken,
    code: sockets.code.address,
    codeToken,
  }, layout, prepareWorker(config));
  // Its failure is the start's, thrown where it is awaited below; a later step's failure stops it.
  starting.catch(() => undefined);
  undo.push(async () => (await starting.catch(() => null))?.dispose());
  const network = await startNetwork(config);
  undo.push(() => network.close());
  // Recorded whatever this runtime's own sandbox mode: other runtimes' sessions must not read its places either.
  // A home that cannot be written to is no reason not to serve; the line says what is then unprotected.
  try {
    recordPlaces(config.dataDir, secretPlaces(config));
  } catch (err) {
    log.warn(`could not record this runtime's places in ~/.service/runtimes (${(err as Error).message}): sessions of other runtimes on this host may read its data directory, accounts file and engine state when they lie outside ~/.service`);
  }
  const notInstalled = config.sandbox === "on" ? installMissing(SANDBOX_PACKAGES, config.sandboxInstall === "auto", (line) => console.log(line)) : null;
  const sandbox = Sandbox.start(config.sandbox, fencedPlaces(config, network.deps.proxy), lock.started, config.dataDir, notInstalled);
  undo.push(async () => sandbox.close());
  // Turns start only once the worker is up, and their tool calls come after.
  let worker: URL | null = null;
  const runtimeTools: RuntimeLink = (body, signal) =>
    worker
      ? fetch(new URL("/internal/tools", worker), { method: "POST", headers: { [INTERNAL_HEADER]: internalToken, "content-type": "application/json" }, body: JSON.stringify(body), signal: signal ?? null })
      : Promise.reject(new Error("the runtime's worker is not up yet"));
  const engines = await startEngineHost(
    {
      network: network.deps,
      dataDir: config.dataDir,
      scratchDir: join(config.dataDir, "scratch"),
      stateDir: config.engineStateDir,
      engineA: await findEngineA(config.engineABin),
      engineB: await findEngineB(config.engineBBin),
      proxyFailureSince: (threadId, since) => network.proxy?.failureSince(threadId, since) ?? null,
      sandbox,
      runtime: runtimeTools,
      codeRoots: config.codeRoots.map((r) => r.path),
    },
    enginesToken,
    sockets.engines,
  );
  undo.push(() => engines.close());
  // ripgrep walks the checkouts inside the session sandbox when there is one (docs/code.md, "The fence").
  const codeHost = await startCodeHost(config);
  undo.push(() => codeHost.close());
  const code = await startCodeService(
    config.codeRoots,
    codeToken,
    (argv, cwd) =>
      sandbox.state === "bwrap"
        ? sandbox.spawn(argv, { cwd, own: [], readOnly: true }, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(argv[0]!, argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] }),
    codeHost.clients,
    new Worktrees(config.dataDir, codeHost.clients, () => config.codeRoots.map((r) => r.path)),
    sockets.code,
  );
  undo.push(() => code.close());
  const accounts = await startAccountService(network.pool, network.completions, accountsToken, sockets.accounts);
  undo.push(() => accounts.close());
  const runtime = await starting;
  const home = runtime.shards[0]!.direct;
  worker = home;
  const workerd = findWorkerdChildren();
  lock.attach(workerd);
  // Measured before the first caller gets in, so a full disk pauses the very first spawn.
  const hostReports = startHostReports(config.dataDir, config.keeper, async (body) => {
    await postInternal(home, internalToken, "/internal/host-report", body);
  });
  undo.push(async () => hostReports.stop());
  await hostReports.now();
  await network.ready;
  const upstreams = runtime.shards.map((s) => ({ host: s.direct.hostname, port: Number(s.direct.port) }));
  const relays = config.followRelay ? new FollowRelays((id) => upstreams[shardOfThread(id, layout)]!, config.heartbeatMs, config.callers) : null;
  const pipe = await startPipe({ host: config.host, port: config.port }, (_method, target) => upstreams[shardOfRequest(target, layout)]!, relays);
  const address = pipe.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const shown = config.host.includes(":") ? `[${config.host}]` : config.host;

  const stopCollecting = collectWhenIdle((globalThis as { gc?: () => void }).gc);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    const started = Date.now();
    setTimeout(() => {
      log.error("did not stop within the time allowed; exiting", { signal, durationMs: Date.now() - started });
      process.exit(1);
    }, STOP_LIMIT_MS).unref();
    try {
      stopCollecting();
      hostReports.stop();
      await pipe.close();
      await engines.close();
      sandbox.close();
      await accounts.close();
      await code.close();
      await runtime.dispose();
      await network.close();
      lock.release();
    } catch (err) {
      log.error("stopped with an error", { signal, error: (err as Error).message, durationMs: Date.now() - started });
      process.exit(1);
    }
    log.info("stopped cleanly", { signal, durationMs: Date.now() - started });
    process.exit(0);
  };
  // Wrangler's module (read for the worker's configuration) and Miniflare's exit hook each
  // exit the process on a signal, before the front could stop what it started and say so.
  // Ours goes on first and theirs come off after: a signal is caught for the listeners in
  // place at that instant, and one caught while none of ours was there would be lost.
  // Both happen before the start line, so that a caller who saw it can stop the front.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const ours = () => void stop(signal);
    process.on(signal, ours);
    for (const theirs of process.listeners(signal)) if (theirs !== ours) process.removeListener(signal, theirs as () => void);
  }

  // Miniflare neither restarts a workerd that dies nor says so. Half a host would answer
  // /health while every call to the other half failed; the whole host stops instead, so
  // that whatever supervises it starts it again (the boot sweep then settles lost turns).
  const watch = setInterval(() => {
    const dead = workerd.find((pid) => !alive(pid));
    if (dead === undefined || stopping) return;
    stopping = true;
    clearInterval(watch);
    log.error(`a workerd process (pid ${dead}) exited; stopping the host`);
    for (const pid of workerd) if (alive(pid)) process.kill(pid, "SIGKILL");
    hostReports.stop();
    lock.release();
    process.exit(1);
  }, 1000);
  watch.unref();
  if (sandbox.state === "unavailable") log.warn(sandbox.refusal());
  console.log(`agent-runtime listening on http://${shown}:${port} data=${config.dataDir} build=${config.build} shards=${layout.count} ${network.describe} ${codeHost.describe} ${sandbox.describe()}`);
  // After the signal handlers: a slow sweep (many lost turns) must not hold off a stop.
  await sweepLostTurns(home, internalToken);
}

/** The header that carries the token of the worker's internal routes (src/routes/internal.ts). */
const INTERNAL_HEADER = "x-service-internal";

/** A call to one of the worker's internal routes (src/routes/internal.ts). */
async function postInternal(direct: URL, token: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(new URL(path, direct), {
    method: "POST",
    headers: { [INTERNAL_HEADER]: token, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
}

/** How often, and how far apart, the boot sweep tries threads it could not settle. */
const SWEEP_TRIES = 4;
const SWEEP_RETRY_MS = 2000;

/**
 * Threads that were mid-turn when the host went down get their lost-turn message now, not
 * when next read. A thread the sweep could not settle (a busy boot) is tried again: left
 * alone, it would show as running until someone happened to read it.
 */
async function sweepLostTurns(direct: URL, token: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let failed: { id: string; error?: string }[];
    try {
      const res = await postInternal(direct, token, "/internal/boot-sweep");
      const body = (await res.json()) as { swept?: { id: string; error?: string }[] };
      failed = (body.swept ?? []).filter((s) => s.error);
    } catch (err) {
      failed = [{ id: "(all)", error: (err as Error).message }];
    }
    if (failed.length === 0) return;
    const last = attempt === SWEEP_TRIES;
    for (const f of failed) log.error(`boot sweep could not settle a lost turn${last ? "" : " (retrying)"}`, { thread: f.id, error: f.error });
    if (last) return;
    await new Promise((r) => setTimeout(r, SWEEP_RETRY_MS));
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DataDirBusy || err instanceof PortUnavailable || err instanceof LogConfigError) {
    console.error(`agent-runtime: ${err.message}`);
    process.exit(2);
  }
  console.error("agent-runtime failed to start:", err);
  process.exit(1);
});
