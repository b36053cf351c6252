import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, readFrontConfig } from "./config.js";
import { alive, DataDirBusy, DataLock, findWorkerdChildren } from "./data-lock.js";
import { FollowRelays } from "./follow-relay.js";
import { startPipe } from "./pipe.js";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { findEngineB } from "./engines/engine-b/binary.js";
import { startAccountService } from "./accounts/service.js";
import { startEngineHost } from "./engines/host.js";
import { startHostReports } from "./host-report.js";
import { startNetwork } from "./network.js";
import { startRuntime } from "./runtime.js";
import { readShardLayout } from "./shard-layout.js";
import { shardOfRequest, shardOfThread } from "../src/shards.js";

const projectDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const config = readFrontConfig(process.env, projectDir);
  const lock = new DataLock(config.dataDir);
  await lock.acquire();
  const layout = readShardLayout(config.dataDir);
  const network = await startNetwork(config);
  const enginesToken = randomBytes(24).toString("hex");
  const engines = await startEngineHost(
    {
      network: network.deps,
      scratchDir: join(config.dataDir, "scratch"),
      stateDir: config.engineStateDir,
      engineB: await findEngineB(config.engineBBin),
      proxyFailureSince: (threadId, since) => network.proxy?.failureSince(threadId, since) ?? null,
    },
    enginesToken,
  );
  const accountsToken = randomBytes(24).toString("hex");
  const accounts = await startAccountService(network.pool, network.completions, accountsToken);
  const internalToken = randomBytes(24).toString("hex");
  const runtime = await startRuntime(config, {
    engines: engines.address,
    accounts: accounts.address,
    bootId: randomBytes(8).toString("hex"),
    internalToken,
    enginesToken,
    accountsToken,
  }, layout);
  const home = runtime.shards[0]!.direct;
  const workerd = findWorkerdChildren();
  lock.attach(workerd);
  // Measured before the first caller gets in, so a full disk pauses the very first spawn.
  const hostReports = startHostReports(config.dataDir, config.keeper, async (body) => {
    await postInternal(home, internalToken, "/internal/host-report", body);
  });
  await hostReports.now();
  const upstreams = runtime.shards.map((s) => ({ host: s.direct.hostname, port: Number(s.direct.port) }));
  const relays = config.followRelay ? new FollowRelays((id) => upstreams[shardOfThread(id, layout)]!, config.heartbeatMs) : null;
  const pipe = await startPipe({ host: config.host, port: config.port }, (_method, target) => upstreams[shardOfRequest(target, layout)]!, relays);
  const address = pipe.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const shown = config.host.includes(":") ? `[${config.host}]` : config.host;
  console.log(`agent-runtime listening on http://${shown}:${port} data=${config.dataDir} build=${config.build} shards=${layout.count} ${network.describe}`);
  await sweepLostTurns(home, internalToken);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`agent-runtime stopping (${signal})`);
    hostReports.stop();
    await pipe.close();
    await engines.close();
    await accounts.close();
    await runtime.dispose();
    await network.close();
    lock.release();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  // Miniflare neither restarts a workerd that dies nor says so. Half a host would answer
  // /health while every call to the other half failed; the whole host stops instead, so
  // that whatever supervises it starts it again (the boot sweep then settles lost turns).
  const watch = setInterval(() => {
    const dead = workerd.find((pid) => !alive(pid));
    if (dead === undefined || stopping) return;
    stopping = true;
    clearInterval(watch);
    console.error(`agent-runtime: a workerd process (pid ${dead}) exited; stopping the host`);
    for (const pid of workerd) if (alive(pid)) process.kill(pid, "SIGKILL");
    hostReports.stop();
    lock.release();
    process.exit(1);
  }, 1000);
  watch.unref();
}

/** A call to one of the worker's internal routes (src/routes/internal.ts). */
async function postInternal(direct: URL, token: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(new URL(path, direct), {
    method: "POST",
    headers: { "x-service-internal": token, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
}

/** Threads that were mid-turn when the host went down get their lost-turn message now, not when next read. */
async function sweepLostTurns(direct: URL, token: string): Promise<void> {
  try {
    const res = await postInternal(direct, token, "/internal/boot-sweep");
    const body = (await res.json()) as { swept?: { id: string; error?: string }[] };
    const failed = (body.swept ?? []).filter((s) => s.error);
    if (failed.length) console.error(`agent-runtime: boot sweep: ${JSON.stringify(failed)}`);
  } catch (err) {
    console.error(`agent-runtime: boot sweep failed: ${(err as Error).message}`);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DataDirBusy) {
    console.error(`agent-runtime: ${err.message}`);
    process.exit(2);
  }
  console.error("agent-runtime failed to start:", err);
  process.exit(1);
});
