import { startFront, removeDir } from "../test/support/front.js";
import { fork } from "node:child_process";
import { join } from "node:path";
import { percentile } from "./load.js";
const front = await startFront();
const scenarios = (process.env.SCEN ?? "1000x20,1000x100").split(",").map((s) => s.split("x").map(Number) as [number, number]);
for (const [followers, rate] of scenarios) {
  const { threadId } = await front.client.spawn();
  const child = fork(join(import.meta.dirname, "followers.ts"), [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const message = <T>(): Promise<T> => new Promise((r) => child.once("message", (m) => r(m as T)));
  child.send({ start: { url: front.url, threadId, after: 1, count: followers } });
  await message();
  const { readFileSync } = await import("node:fs"); const { execFileSync } = await import("node:child_process");
  const cpu = (pid: number) => { const x = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(x[11]) + Number(x[12])) / 100; };
  const wd = Number(execFileSync("pgrep", ["-P", String(front.proc.pid), "workerd"]).toString().trim());
  const pids = { workerd: wd, front: front.proc.pid!, followers: child.pid!, bench: process.pid };
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpu(p)]));
  const lat: number[] = []; const total = rate * 5; const started = performance.now(); const posts = [];
  for (let i = 0; i < total; i++) { const w = started + (i * 1000) / rate - performance.now(); if (w > 0) await new Promise((r) => setTimeout(r, w));
    const t = performance.timeOrigin + performance.now(); posts.push(front.client.post(threadId, { text: String(t) }).then(() => lat.push(performance.timeOrigin + performance.now() - t))); }
  await Promise.all(posts);
  const secs = (performance.now() - started) / 1000;
  console.log("cpu %", Object.entries(pids).map(([k, p]) => `${k} ${(((cpu(p) - before[k]!) / secs) * 100).toFixed(0)}`).join(", "));
  await new Promise((r) => setTimeout(r, 1000));
  child.send({ report: true }); const rep = await message<any>();
  console.log(`${followers}x${rate}: p50 ${rep.p50.toFixed(0)} p99 ${rep.p99.toFixed(0)} share ${(rep.deliveries / (total * followers) * 100).toFixed(1)}% append p50 ${percentile(lat,50).toFixed(0)} p99 ${percentile(lat, 99).toFixed(0)}`);
}
await front.stop(); removeDir(front.dataDir); process.exit(0);
