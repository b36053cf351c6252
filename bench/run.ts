/**
 * `npm run bench`: the runtime's costs beside the platform floors, measured in one run
 * so that ratios compare like with like on a noisy machine. Prints one table and
 * writes it to bench/results/latest.md.
 */
import autocannon from "autocannon";
import { fork, spawn } from "node:child_process";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, removeDir, startFront, PROJECT_DIR, type Front } from "../test/support/front.js";
import { startDurableObjectFloor, startSplitDurableObjectFloor, startSqliteFloor } from "./floors.js";
import { streamSimple, type Api, type Model } from "@mariozechner/pi-ai";
import OpenAI from "openai";
import { startSimulator } from "../local-front/simulator/server.js";
import { percentile, postLoad, sequential, treeCpuMs, type LoadResult } from "./load.js";
import { defaultConfigThread, longThread, reductionTimes } from "./compaction.js";
import { seatRows } from "./seats.js";
import { operationRows } from "./operations.js";
import { toolRows } from "./tools.js";
import { memoryRows } from "./memory.js";
import { codeRows } from "./code.js";
import { codeHostRows } from "./code-host.js";
import { roomRows } from "./rooms.js";
import { aguiRows } from "./agui.js";
import { footprintRows } from "./footprint.js";
import { growthRows } from "./growth.js";

const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 2);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 16);
const FOLLOW_SECONDS = Number(process.env.BENCH_FOLLOW_SECONDS ?? 10);
// Held, so appends measure the log alone: a message that is not held also starts a turn.
const BODY = JSON.stringify({ text: "an append of a typical short message, about a hundred bytes long.", hold: true });

const rows: string[][] = [];
const row = (...cells: (string | number)[]) => rows.push(cells.map(String));
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

/**
 * Compares two targets in alternating short slices and returns the median of the
 * per-pair ratios. The disk's commit rate here drifts by a third over tens of seconds,
 * so two long runs taken one after the other compare different disks; adjacent short
 * slices, with the order swapped each pair, see the same one.
 */
interface Target {
  url: string;
  paths: string[];
  headers?: Record<string, string>;
}

async function paired(a: Target, b: Target): Promise<{ ratio: number; a: LoadResult; b: LoadResult; errors: number }> {
  const ratios: number[] = [];
  const as: LoadResult[] = [];
  const bs: LoadResult[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const first = i % 2 === 0;
    const ra = first ? await postLoad(a.url, a.paths, BODY, SLICE_SECONDS, 16, a.headers) : null;
    const rb = await postLoad(b.url, b.paths, BODY, SLICE_SECONDS, 16, b.headers);
    const ra2 = ra ?? (await postLoad(a.url, a.paths, BODY, SLICE_SECONDS, 16, a.headers));
    as.push(ra2);
    bs.push(rb);
    ratios.push(ra2.perSecond / rb.perSecond);
  }
  const byRate = (xs: LoadResult[]) => [...xs].sort((x, y) => x.perSecond - y.perSecond)[Math.floor(xs.length / 2)]!;
  return { ratio: percentile(ratios, 50), a: byRate(as), b: byRate(bs), errors: as.reduce((n, r) => n + r.errors, 0) };
}

async function appends(front: Front): Promise<void> {
  const one = [(await front.client.spawn()).threadId].map((id) => `/threads/${id}/messages`);
  const many = (await Promise.all(Array.from({ length: 64 }, () => front.client.spawn()))).map((t) => `/threads/${t.threadId}/messages`);
  const doFloor = await startDurableObjectFloor();
  const sqliteFloor = await startSqliteFloor();
  const oneFloor = ["/one"];
  const manyFloor = Array.from({ length: 64 }, (_, i) => `/t${i}`);
  await postLoad(front.url, one, BODY, 1);
  await postLoad(doFloor.url, oneFloor, BODY, 1);
  log(`appends: ${PAIRS} pairs of ${SLICE_SECONDS} s slices, 1 thread`);
  const single = await paired({ url: front.url, paths: one }, { url: doFloor.url, paths: oneFloor });
  log(`appends: 64 threads`);
  const spread = await paired({ url: front.url, paths: many }, { url: doFloor.url, paths: manyFloor });
  log(`appends: 64 threads against the floor split over two workerd processes`);
  const splitFloor = await startSplitDurableObjectFloor();
  await postLoad(splitFloor.url, manyFloor, BODY, 1);
  const split = await paired({ url: front.url, paths: many }, { url: splitFloor.url, paths: manyFloor });
  await splitFloor.close();
  // Last, and without the runtime: appends stall for a few seconds after a heavy append
  // load (up to 0.5 s right after, 80 ms five seconds on), which the follow runs that
  // come next would otherwise measure.
  log(`appends: the DO floor against Node + SQLite`);
  const floors = await paired({ url: doFloor.url, paths: oneFloor }, { url: sqliteFloor.url, paths: oneFloor });
  await doFloor.close();
  await sqliteFloor.close();
  const rate = (r: LoadResult) => `${fmt(r.perSecond)}/s, p99 ${fmt(r.p99ms)} ms`;
  row("appends through the front, 1 thread (c=16)", rate(single.a), `DO insert floor, 1 object: ${rate(single.b)}`, fmt(single.ratio, 2), ">= 0.9");
  row("appends through the front, 64 threads (c=16)", rate(spread.a), `DO insert floor, 64 objects: ${rate(spread.b)}`, fmt(spread.ratio, 2), ">= 0.9");
  row(
    "appends through the front, 64 threads, against the floor split as the runtime is",
    rate(split.a),
    `DO insert floor, 64 objects over two workerd processes behind the routed pipe: ${rate(split.b)}`,
    fmt(split.ratio, 2),
    "",
  );
  row("DO insert floor, 1 object (direct socket)", rate(floors.a), `Node + better-sqlite3, WAL, synchronous=FULL: ${rate(floors.b)}`, fmt(floors.ratio, 2), "");
  const failed = single.errors + spread.errors + split.errors;
  if (failed > 0) row("failed appends during the runs above", failed, "", "", "0");
}

/**
 * What the caller gate costs a browser page: appends carrying an allowed Origin (judged,
 * then answered with CORS headers on a re-made response) beside the same appends with no
 * browser headers (judged on Host alone), on one thread, in paired slices.
 */
async function callers(front: Front): Promise<void> {
  const paths = [`/threads/${(await front.client.spawn()).threadId}/messages`];
  const page = { origin: "http://127.0.0.1:5189", "sec-fetch-site": "cross-site" };
  await postLoad(front.url, paths, BODY, 1);
  log(`callers: ${PAIRS} pairs of ${SLICE_SECONDS} s slices, appends from an allowed page against plain appends`);
  const r = await paired({ url: front.url, paths, headers: page }, { url: front.url, paths });
  const rate = (x: LoadResult) => `${fmt(x.perSecond)}/s, p99 ${fmt(x.p99ms)} ms`;
  row("appends from a browser page on an allowed origin (CORS answers), 1 thread (c=16)", rate(r.a), `plain appends, no browser headers: ${rate(r.b)}`, fmt(r.ratio, 2), ">= 0.9");
  if (r.errors > 0) row("failed appends from the page during the run above", r.errors, "", "", "0");
}

/**
 * What the session sandbox costs a tool call: a pi turn whose one step runs `true` in
 * the shell, on a front that fences it (bubblewrap, a network of its own) beside a front
 * with SERVICE_SANDBOX=off, measured in alternating blocks. Once on one thread, whose
 * session's kept sandbox runs each turn's command; and once on a new thread each turn,
 * whose command starts the session's sandbox.
 */
async function sandboxCost(): Promise<void> {
  const fenced = await startFront();
  const open = await startFront({ env: { SERVICE_SANDBOX: "off" } });
  try {
    const text = `@sim ${JSON.stringify({ tool: { name: "shell", input: { command: "true" } } })}\ngo`;
    const turn = async (front: Front, threadId: string) => {
      const r = await front.client.send(threadId, { text });
      if (r.outcome !== "completed") throw new Error(`tool turn failed: ${JSON.stringify(r.failure)}`);
    };
    const turnOn = async (front: Front) => {
      const { threadId } = await front.client.spawn({ permissions: "allow" });
      return () => turn(front, threadId);
    };
    // The thread is spawned before the clock starts: what is timed is the turn alone.
    const turnsOnNew = async (front: Front, n: number) => {
      const ids = await Promise.all(Array.from({ length: n }, async () => (await front.client.spawn({ permissions: "allow" })).threadId));
      let i = 0;
      return sequential(n, () => turn(front, ids[i++]!));
    };
    const a = await turnOn(fenced);
    const b = await turnOn(open);
    await sequential(5, a);
    await sequential(5, b);
    const as: { p50: number; p99: number }[] = [];
    const bs: { p50: number; p99: number }[] = [];
    const an: { p50: number; p99: number }[] = [];
    const bn: { p50: number; p99: number }[] = [];
    for (let i = 0; i < 4; i++) {
      as.push(await sequential(25, a));
      bs.push(await sequential(25, b));
      an.push(await turnsOnNew(fenced, 10));
      bn.push(await turnsOnNew(open, 10));
    }
    const median = (xs: { p50: number }[]) => percentile(xs.map((x) => x.p50), 50);
    row(
      "a turn with one tool call (pi, shell `true`) in the session sandbox (sequential)",
      `p50 ${fmt(median(as), 1)} ms, p99 ${fmt(Math.max(...as.map((x) => x.p99)), 1)} ms`,
      `the same turn with SERVICE_SANDBOX=off: p50 ${fmt(median(bs), 1)} ms`,
      fmt(median(as) / median(bs), 2),
      "",
    );
    row(
      "the same, each turn on a new thread: its command starts the session's sandbox (sequential)",
      `p50 ${fmt(median(an), 1)} ms, p99 ${fmt(Math.max(...an.map((x) => x.p99)), 1)} ms`,
      `the same turn with SERVICE_SANDBOX=off: p50 ${fmt(median(bn), 1)} ms`,
      fmt(median(an) / median(bn), 2),
      "",
    );
  } finally {
    for (const f of [fenced, open]) {
      await f.stop();
      removeDir(f.dataDir);
    }
  }
}

/**
 * One append, as the follow scenarios post them: a keep-alive `http.request`. The client
 * library's `fetch` and answer schema cost this process about 2 ms of CPU a post, a fifth
 * of a core at 100 a second, taken from the two CPUs the front and workerd run on.
 */
const postAgent = new HttpAgent({ keepAlive: true });
function post(url: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", agent: postAgent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 202 ? resolve() : reject(new Error(`the append answered ${res.statusCode}`))));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
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
  const failures: Error[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.timeOrigin + performance.now();
    posts.push(
      post(`${front.url}/threads/${threadId}/messages`, JSON.stringify({ text: String(t), hold: true })).then(
        () => {
          posted++;
          latencies.push(performance.timeOrigin + performance.now() - t);
        },
        (err: unknown) => void failures.push(err as Error),
      ),
    );
  }
  await Promise.all(posts);
  if (failures.length) throw new Error(`${failures.length} of ${total} appends failed; the first: ${failures[0]!.message}`);
  // Deliveries count if they arrive within a second after the last post.
  await new Promise((r) => setTimeout(r, 1000));
  child.send({ report: true });
  const report = await message<{ deliveries: number; p50: number; p99: number; cpuMs: number }>();
  const share = report.deliveries / (posted * followers);
  row(
    `follow (${path}): ${followers} followers, ${rate} events/s for ${FOLLOW_SECONDS} s`,
    `p50 ${fmt(report.p50)} ms, p99 ${fmt(report.p99)} ms, ${fmt(share * 100, 1)} % delivered`,
    `append p99 meanwhile ${fmt(percentile(latencies, 99))} ms; connect ${fmt(connectMs)} ms; the followers' process used ${fmt(report.cpuMs)} ms of CPU`,
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

/**
 * A whole turn (message in, pi, the simulator, reply out) against the same model call
 * made straight from Node with pi-ai: the difference is what the runtime adds per turn
 * (the durable events, the engines binding, the agent loop).
 */
async function turns(front: Front): Promise<void> {
  if (!front.simulatorUrl) {
    row("turns", "skipped: the front runs without the simulator", "", "", "");
    return;
  }
  const threads = await Promise.all(Array.from({ length: 16 }, () => front.client.spawn()));
  let next = 0;
  const oneAtATime = async () => {
    const t = threads[next++ % threads.length]!.threadId;
    const r = await front.client.send(t, { text: "ping" });
    if (r.outcome !== "completed") throw new Error(`turn failed: ${JSON.stringify(r.failure)}`);
  };
  const model: Model<Api> = {
    id: "sim-1",
    name: "sim-1",
    api: "openai-completions",
    provider: "simulator",
    baseUrl: `${front.simulatorUrl}/v1`,
    reasoning: false,
    input: ["text"],
    cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 8192,
  };
  const direct = async () => {
    const m = await streamSimple(model, { messages: [{ role: "user", content: "ping", timestamp: Date.now() }] }, { apiKey: "bench", maxRetries: 0 }).result();
    if (m.stopReason !== "stop") throw new Error(`model call failed: ${m.errorMessage}`);
  };
  await sequential(20, oneAtATime);
  await sequential(20, direct);
  // CPU of every process the call runs in: the front (which also runs the simulator) with its workerd processes, and this one.
  const cpuOf = async (n: number, call: () => Promise<void>) => {
    const front0 = treeCpuMs(front.proc.pid!);
    const self0 = process.cpuUsage();
    const latency = await sequential(n, call);
    const front1 = treeCpuMs(front.proc.pid!);
    const self = process.cpuUsage(self0);
    const cpu = front0 === null || front1 === null ? NaN : (front1 - front0 + (self.user + self.system) / 1000) / n;
    return { ...latency, cpu };
  };
  const viaRuntime = await cpuOf(200, oneAtATime);
  const straight = await cpuOf(200, direct);
  row(
    "a turn: send -> pi -> simulator -> reply (sequential)",
    `p50 ${fmt(viaRuntime.p50, 1)} ms, p99 ${fmt(viaRuntime.p99, 1)} ms`,
    `the same model call straight from Node (pi-ai): p50 ${fmt(straight.p50, 1)} ms`,
    fmt(viaRuntime.p50 / straight.p50, 2),
    "",
  );
  row(
    "a turn's CPU, all processes (the front, its workerd processes, the client; sequential)",
    `${fmt(viaRuntime.cpu, 1)} ms a turn`,
    `the same model call straight from Node (pi-ai), simulator included: ${fmt(straight.cpu, 1)} ms`,
    fmt(viaRuntime.cpu / straight.cpu, 2),
    "",
  );
  // The client library's sendAndFollow: post, then the log over follow until the turn's end.
  const streamed = async () => {
    const t = threads[next++ % threads.length]!.threadId;
    let last = "";
    for await (const e of front.client.sendAndFollow(t, { text: "ping" })) last = e.kind;
    if (last !== "turn-ended") throw new Error(`the streamed turn ended with ${last}`);
  };
  await sequential(20, streamed);
  const viaStream = await sequential(200, streamed);
  row(
    "a turn streamed with the client's sendAndFollow, until turn-ended (sequential)",
    `p50 ${fmt(viaStream.p50, 1)} ms, p99 ${fmt(viaStream.p99, 1)} ms`,
    `the same turn with the client's send: p50 ${fmt(viaRuntime.p50, 1)} ms`,
    fmt(viaStream.p50 / viaRuntime.p50, 2),
    "",
  );
  const started = performance.now();
  const perThread = 10;
  await Promise.all(threads.map(async (t) => {
    for (let i = 0; i < perThread; i++) await front.client.send(t.threadId, { text: "ping" });
  }));
  const rate = (threads.length * perThread) / ((performance.now() - started) / 1000);
  row("turns on 16 threads at once (send, 10 each)", `${fmt(rate)} turns/s`, "", "", "");
}

/** A streamed completion of eight deltas, read whole with the official SDK. */
function streamedCompletion(client: OpenAI): () => Promise<void> {
  return async () => {
    const stream = await client.chat.completions.create({ model: "sim-1", stream: true, messages: [{ role: "user", content: '@sim {"reply": "a short answer in a few pieces", "chunks": 8}' }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    if (text !== "a short answer in a few pieces") throw new Error(`unexpected completion: ${text}`);
  };
}

/** Calls `call` `total` times, `concurrency` at once: the rate and each call's latency. */
async function concurrent(concurrency: number, total: number, call: () => Promise<void>): Promise<{ perSecond: number; p50: number; p99: number; errors: number; firstError: string }> {
  const times: number[] = [];
  let started = 0;
  let errors = 0;
  let firstError = "";
  const began = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        const t = performance.now();
        try {
          await call();
          times.push(performance.now() - t);
        } catch (err) {
          errors++;
          firstError ||= (err as Error).message.slice(0, 200);
        }
      }
    }),
  );
  return { perSecond: times.length / ((performance.now() - began) / 1000), p50: percentile(times, 50), p99: percentile(times, 99), errors, firstError };
}

/** The concurrencies of the completions growth rows (issue 32), and how many calls each measures. */
const COMPLETION_CONCURRENCY = [1, 16, 64, 256].map((c) => ({ c, total: Math.max(100, c * 4) }));

/**
 * A streamed completion through the runtime (the workspace's account, the relay that
 * watches the stream for a provider's error, the `completion` event) against the same
 * call made straight to a simulator with the same SDK: once with an account behind the
 * credential proxy and the simulator standing in for the provider (TLS, as in
 * production), once on the plain simulator (no account, no proxy).
 */
async function completions(): Promise<void> {
  const sim = await startSimulator();
  const straight = streamedCompletion(new OpenAI({ apiKey: "bench", baseURL: `${sim.url}/v1`, maxRetries: 0 }));
  const setups: [string, Record<string, unknown>, Record<string, string>][] = [
    ["an account behind the credential proxy", { accounts: [{ id: "bench", provider: "openai", apiKey: "sk-live-bench" }] }, { SERVICE_PROVIDER_UPSTREAM: "simulator" }],
    ["the plain simulator, no proxy", { accounts: [] }, {}],
  ];
  try {
    for (const [what, accounts, env] of setups) {
      const dataDir = mkdtempSync(join(tmpdir(), "bench-completions-"));
      writeFileSync(join(dataDir, "accounts.json"), JSON.stringify(accounts));
      writeFileSync(join(dataDir, "workspaces.json"), JSON.stringify({ workspaces: [{ name: "bench", slug: "acme/bench", accounts: (accounts as { accounts: { id: string }[] }).accounts.map((a) => a.id) }] }));
      const front = await startFront({ dataDir, env });
      try {
        const viaRuntime = streamedCompletion(new OpenAI({ apiKey: "unused", baseURL: `${front.url}/v1`, maxRetries: 0, defaultHeaders: { "x-service-workspace": "bench" } }));
        await sequential(20, viaRuntime);
        await sequential(20, straight);
        const runtime = await sequential(200, viaRuntime);
        const direct = await sequential(200, straight);
        row(
          `a streamed completion (8 deltas) through /v1/chat/completions, ${what} (sequential)`,
          `p50 ${fmt(runtime.p50, 1)} ms, p99 ${fmt(runtime.p99, 1)} ms`,
          `the same call straight to a simulator (openai SDK): p50 ${fmt(direct.p50, 1)} ms`,
          fmt(runtime.p50 / direct.p50, 2),
          "",
        );
        // Growth: the same call as concurrency grows, each level against the simulator alone
        // at the same concurrency, taken one right after the other.
        for (const { c, total } of COMPLETION_CONCURRENCY) {
          log(`completions: ${what}, ${c} at once`);
          const r = await concurrent(c, total, viaRuntime);
          const d = await concurrent(c, total, straight);
          row(
            `streamed completions through /v1/chat/completions, ${what}, ${c} at once (${total} calls)`,
            `${fmt(r.perSecond)}/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms (overhead p99 ${fmt(r.p99 - d.p99, 1)} ms)${r.errors ? `, ${r.errors} failed (the first: ${r.firstError})` : ""}`,
            `the simulator alone, ${c} at once: ${fmt(d.perSecond)}/s, p50 ${fmt(d.p50, 1)} ms, p99 ${fmt(d.p99, 1)} ms`,
            fmt(r.perSecond / d.perSecond, 2),
            c === 1 ? "overhead p99 under 2 ms" : "",
          );
        }
      } finally {
        await front.stop();
        removeDir(dataDir);
      }
    }
  } finally {
    await sim.close();
  }
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

/** BENCH_ONLY=appends,callers,follow,tail,turns,agui,seats,operations,tools,memory,code,codehost,rooms,completions,sandbox,spawn,startup,footprint,compaction,growth runs just those sections. */
const ONLY = new Set((process.env.BENCH_ONLY ?? "appends,callers,follow,tail,turns,agui,seats,operations,tools,memory,code,codehost,rooms,completions,sandbox,spawn,startup,footprint,compaction,growth").split(","));

async function main(): Promise<void> {
  const front = await startFront();
  try {
    if (ONLY.has("appends")) await appends(front);
    if (ONLY.has("callers")) await callers(front);
    if (ONLY.has("follow"))
      for (const [followers, rate] of [
        [100, 20],
        [100, 100],
        [1000, 20],
        [1000, 100],
      ] as const) {
        log(`follow ${followers} x ${rate}/s`);
        await followScenario(front, followers, rate, "front relay");
      }
    if (ONLY.has("tail")) {
      log("tail pages");
      await tailPages(front);
    }
    if (ONLY.has("turns")) {
      log("turns");
      await turns(front);
    }
    if (ONLY.has("agui") && front.simulatorUrl) {
      log("AG-UI: a streamed reply over agui and stream");
      await aguiRows(front, row, fmt);
    }
    if (ONLY.has("seats") && front.simulatorUrl) {
      log("seats, steering, attachments");
      await seatRows(front, row, fmt);
    }
    if (ONLY.has("operations") && front.simulatorUrl) {
      log("operations: wakes and delegations");
      await operationRows(front, row, fmt);
    }
    if (ONLY.has("tools") && front.simulatorUrl) {
      log("the runtime's tools");
      await toolRows(front, row, fmt);
    }
    if (ONLY.has("memory")) {
      log("workspace memory");
      await memoryRows(front, row, fmt);
    }
    if (ONLY.has("spawn")) {
      log("spawn");
      await spawnLatency(front);
    }
  } catch (err) {
    // What the runtime said about it is the first thing to look at.
    log(`failed; the front's last output:\n${front.output().slice(-4000)}`);
    throw err;
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
  if (ONLY.has("code")) {
    log("code reads");
    await codeRows(row, fmt);
  }
  if (ONLY.has("codehost")) {
    log("the code host");
    await codeHostRows(row, fmt);
  }
  if (ONLY.has("rooms")) {
    log("review rooms");
    await roomRows(row, fmt);
  }
  if (ONLY.has("follow")) {
    // The same fan-out without the front's relay: every follower served by the thread's
    // object, as on Cloudflare, where there is no Node front.
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
  }
  if (ONLY.has("completions")) {
    log("completions");
    await completions();
  }
  if (ONLY.has("sandbox")) {
    log("sandbox");
    await sandboxCost();
  }
  if (ONLY.has("growth")) {
    log("growth: appends, memory, the thread list and follow as threads and followers grow");
    await growthRows(row, fmt, (front, followers) => followScenario(front, followers, 20, "front relay, growth"));
  }
  if (ONLY.has("startup")) {
    log("startup");
    await startup();
  }
  if (ONLY.has("footprint")) {
    log("footprint: the front's memory and its CPU to the start line");
    await footprintRows(row, fmt);
  }
  if (ONLY.has("compaction")) {
    log("compaction: reductions on a 200,000-token transcript");
    reductionTimes(row, fmt);
    log("compaction: a long thread on a small window, and the same script on a large one");
    await longThread(row, fmt);
    log("compaction: 24 turns of long messages in the default configuration, and the same on a large window");
    await defaultConfigThread(row, fmt);
  }

  const header = ["measure", "result", "baseline in the same run", "ratio", "target"];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
  console.log(table);
  mkdirSync(join(PROJECT_DIR, "bench/results"), { recursive: true });
  writeFileSync(join(PROJECT_DIR, "bench/results/latest.md"), `${new Date().toISOString()}, appends in ${PAIRS} pairs of ${SLICE_SECONDS} s slices\n\n${table}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
