import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, readFrontConfig } from "./config.js";
import { DataDirBusy, DataLock, findWorkerdChild } from "./data-lock.js";
import { FollowRelays } from "./follow-relay.js";
import { startPipe } from "./pipe.js";
import { startRuntime } from "./runtime.js";

const projectDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const config = readFrontConfig(process.env, projectDir);
  const lock = new DataLock(config.dataDir);
  await lock.acquire();
  const runtime = await startRuntime(config);
  const workerd = findWorkerdChild();
  if (workerd) lock.attach(workerd);
  const upstream = { host: runtime.direct.hostname, port: Number(runtime.direct.port) };
  const relays = config.followRelay ? new FollowRelays(upstream, config.heartbeatMs) : null;
  const pipe = await startPipe({ host: config.host, port: config.port }, upstream, relays);
  const address = pipe.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const shown = config.host.includes(":") ? `[${config.host}]` : config.host;
  console.log(`agent-runtime listening on http://${shown}:${port} data=${config.dataDir} build=${config.build}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`agent-runtime stopping (${signal})`);
    await pipe.close();
    await runtime.mf.dispose();
    lock.release();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DataDirBusy) {
    console.error(`agent-runtime: ${err.message}`);
    process.exit(2);
  }
  console.error("agent-runtime failed to start:", err);
  process.exit(1);
});
