/**
 * `npm run bench`: the runtime's costs beside the platform floors, measured in one run
 * so that ratios compare like with like on a noisy machine. Prints one table and
 * writes it to bench/results/latest.md.
 */
import autocannon from "autocannon";
import { fork, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDir, startFront, PROJECT_DIR, type Front } from "../test/support/front.js";
import { startDurableObjectFloor, startSqliteFloor } from "./floors.js";
import { percentile, postLoad, sequential, type LoadResult } from "./load.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FOLLOW_SECONDS = Number(process.env.BENCH_FOLLOW_SECONDS ?? 10);
const BODY = JSON.stringify({ text: "an append of a typical short message, about a hundred bytes long in all." });

const rows: string[][] = [];
const row = (...cells: (string | number)[]) => rows.push(cells.map(String));
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

function median(results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(results.length / 2)]!;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function appends(front: Front): Promise<void> {
  const one = [(await front.client.spawn()).threadId].map((id) => `/threads/${id}/messages`);
  const many = (await Promise.all(Array.from({ length: 64 }, () => front.client.spawn()))).map((t) => `/threads/${t.threadId}/messages`);
  const doFloor = await startDurableObjectFloor();
  const sqliteFloor = await startSqliteFloor();
  const oneFloor = ["/one"];
  const manyFloor = Array.from({ length: 64 }, (_, i) => `/t${i}`);
  const runs: Record<string, LoadResult[]> = { ours1: [], ours64: [], floor1: [], floor64: [], sqlite: [] };
  // Warm every path once, then interleave the rounds so drift hits all alike.
  await postLoad(front.url, one, BODY, 1);
  await postLoad(doFloor.url, oneFloor, BODY, 1);
  for (let r = 0; r < ROUNDS; r++) {
    log(`appends round ${r + 1}/${ROUNDS}`);
    runs.ours1!.push(await postLoad(front.url, one, BODY, SECONDS));
    runs.floor1!.push(await postLoad(doFloor.url, oneFloor, BODY, SECONDS));
    runs.ours64!.push(await postLoad(front.url, many, BODY, SECONDS));
    runs.floor64!.push(await postLoad(doFloor.url, manyFloor, BODY, SECONDS));
    runs.sqlite!.push(await postLoad(sqliteFloor.url, oneFloor, BODY, SECONDS));
  }
  await doFloor.close();
  await sqliteFloor.close();
  const [o1, f1, o64, f64, sq] = ["ours1", "floor1", "ours64", "floor64", "sqlite"].map((k) => median(runs[k]!)) as LoadResult[];
  const errors = [o1, o64].reduce((n, r) => n + r!.errors, 0);
  row("appends through the front, 1 thread (c=16)", `${fmt(o1!.perSecond)}/s, p99 ${fmt(o1!.p99ms)} ms`, `DO insert floor, 1 object: ${fmt(f1!.perSecond)}/s`, fmt(o1!.perSecond / f1!.perSecond, 2), ">= 0.9");
  row("appends through the front, 64 threads (c=16)", `${fmt(o64!.perSecond)}/s, p99 ${fmt(o64!.p99ms)} ms`, `DO insert floor, 64 objects: ${fmt(f64!.perSecond)}/s`, fmt(o64!.perSecond / f64!.perSecond, 2), ">= 0.9");
  row("DO insert floor, 1 object (direct socket)", `${fmt(f1!.perSecond)}/s`, `Node + better-sqlite3, WAL, synchronous=FULL: ${fmt(sq!.perSecond)}/s`, fmt(f1!.perSecond / sq!.perSecond, 2), "");
  if (errors > 0) row("failed appends during the runs above", errors, "", "", "0");
}

async function followScenario(front: Front, followers: number, rate: number, path: string): Promise<void> {
  const { threadId } = await front.client.spawn();
  const child = fork(join(import.meta.dirname, "followers.ts"), [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const message = <T>(): Promise<T> => new Promise((r) => child.once("message", (m) => r(m as T)));
  child.send({ start: { url: front.url, threadId, after: 1, count: followers } });
  const { connectMs } = await message<{ connectMs: number }>();
  const latencies: number[] = [];
  const total = rate * FOLLOW_SECONDS;
  const started = performance.now();
  let posted = 0;
  const posts: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.timeOrigin + performance.now();
    posts.push(
      front.client.post(threadId, { text: String(t) }).then(() => {
        posted++;
        latencies.push(performance.timeOrigin + performance.now() - t);
      }),
    );
  }
  await Promise.all(posts);
  // Deliveries count if they arrive within a second after the last post.
  await new Promise((r) => setTimeout(r, 1000));
  child.send({ report: true });
  const report = await message<{ deliveries: number; p50: number; p99: number }>();
  const share = report.deliveries / (posted * followers);
  row(
    `follow (${path}): ${followers} followers, ${rate} events/s for ${FOLLOW_SECONDS} s`,
    `p50 ${fmt(report.p50)} ms, p99 ${fmt(report.p99)} ms, ${fmt(share * 100, 1)} % delivered`,
    `append p99 meanwhile ${fmt(percentile(latencies, 99))} ms; connect ${fmt(connectMs)} ms`,
    "",
    path !== "front relay" ? "" : followers === 1000 && rate === 20 ? "p99 < 100 ms" : followers === 1000 && rate === 100 ? "100 % delivered" : "",
  );
}

async function fill(front: Front, threadId: string, events: number): Promise<number> {
  const started = performance.now();
  await autocannon({
    url: `${front.url}/threads/${threadId}/messages`,
    connections: 64,
    amount: events,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
  });
  return (events / (performance.now() - started)) * 1000;
}

async function tailPages(front: Front): Promise<void> {
  const small = (await front.client.spawn()).threadId;
  const large = (await front.client.spawn()).threadId;
  await fill(front, small, 1_000);
  log("filling a thread with 100,000 events");
  const rate = await fill(front, large, 100_000);
  const read = async (id: string, query: string) => sequential(300, async () => (await fetch(`${front.url}/threads/${id}/tail?${query}`)).arrayBuffer());
  for (const [what, q] of [
    ["newest page (before=latest, 200 events)", "before=latest&limit=200"],
    ["forward page from the middle (200 events)", "after=500&limit=200"],
  ] as const) {
    const qLarge = q.replace("after=500", "after=50000");
    const s = await read(small, q);
    const l = await read(large, qLarge);
    row(`tail ${what} at 100,000 events`, `p50 ${fmt(l.p50, 2)} ms, p99 ${fmt(l.p99, 2)} ms`, `same at 1,000 events: p50 ${fmt(s.p50, 2)} ms`, fmt(l.p50 / s.p50, 2), "<= 1.5");
  }
  row("appends to one thread at c=64 (the fill above)", `${fmt(rate)}/s`, "", "", "");
}

async function spawnLatency(front: Front): Promise<void> {
  const s = await sequential(200, () => front.client.spawn({ title: "bench" }));
  row("spawn latency (sequential)", `p50 ${fmt(s.p50, 1)} ms, p99 ${fmt(s.p99, 1)} ms`, "", "", "");
}

async function startup(): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), "bench-start-"));
    const started = performance.now();
    const child = spawn("npm", ["start"], {
      cwd: PROJECT_DIR,
      env: { ...process.env, SERVICE_AGENTS_PORT: String(port), SERVICE_AGENTS_DATA_DIR: dataDir },
      stdio: "ignore",
      detached: true,
    });
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    times.push(performance.now() - started);
    process.kill(-child.pid!, "SIGTERM");
    await new Promise((r) => child.once("exit", r));
    removeDir(dataDir);
  }
  row("`npm start` to the first /health answer (median of 3)", `${fmt(percentile(times, 50))} ms`, "", "", "");
}

async function main(): Promise<void> {
  const front = await startFront();
  try {
    log("appends");
    await appends(front);
    for (const [followers, rate] of [
      [100, 20],
      [100, 100],
      [1000, 20],
      [1000, 100],
    ] as const) {
      log(`follow ${followers} x ${rate}/s`);
      await followScenario(front, followers, rate, "front relay");
    }
    log("tail pages");
    await tailPages(front);
    log("spawn");
    await spawnLatency(front);
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
  // The same fan-out without the front's relay: every follower served by the thread's object,
  // as on Cloudflare, where there is no Node front.
  const direct = await startFront({ env: { SERVICE_FOLLOW_RELAY: "off" } });
  try {
    for (const rate of [20, 100]) {
      log(`follow 1000 x ${rate}/s without the relay`);
      await followScenario(direct, 1000, rate, "object fan-out only");
    }
  } finally {
    await direct.stop();
    removeDir(direct.dataDir);
  }
  log("startup");
  await startup();

  const header = ["measure", "result", "baseline in the same run", "ratio", "target"];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
  console.log(table);
  mkdirSync(join(PROJECT_DIR, "bench/results"), { recursive: true });
  writeFileSync(join(PROJECT_DIR, "bench/results/latest.md"), `${new Date().toISOString()}, ${ROUNDS} rounds of ${SECONDS} s\n\n${table}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
