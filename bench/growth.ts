/**
 * The growth rows of `npm run bench` (issue 32, "cost as work grows"): what the runtime
 * costs as the number of threads and of followers grows, as curves, not points. A front of
 * its own, so the memory read is that of this work alone:
 * - the workerd processes' memory (and the front's) after 1,000 threads were spawned and
 *   written once, and again after an idle period, beside the DO floor's workerd with 1,000
 *   objects written once: what a thread keeps, and whether it gives it back;
 * - appends spread over 1, 10, 100 and 1,000 threads written at once (as many connections
 *   as threads, at least 16 and at most 256), each against the DO insert floor with as many
 *   objects, in alternating slices;
 * - the thread list's first page at 100, 1,000 and 10,000 threads, and the memory of 10,000
 *   threads spawned, then idle;
 * - follow with 10 to 2,000 followers of one thread (the caller's `follow`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { removeDir, startFront, type Front } from "../test/support/front.js";
import { startDurableObjectFloor } from "./floors.js";
import { percentile, postLoad, sequential, type LoadResult } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const IDLE_SECONDS = Number(process.env.BENCH_GROWTH_IDLE_SECONDS ?? 45);
const THREADS = Number(process.env.BENCH_GROWTH_THREADS ?? 10_000);
const SLICE_SECONDS = Number(process.env.BENCH_GROWTH_SLICE_SECONDS ?? 2);
const PAIRS = Number(process.env.BENCH_GROWTH_PAIRS ?? 3);
const BODY = JSON.stringify({ text: "an append of a typical short message, about a hundred bytes long.", hold: true });
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) * 1024;

/** The workerd processes `parent` started. */
function workerdOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: the parent's pid follows the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("workerd")) pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

/** Resident memory, in bytes, of the front and of its workerd processes. */
export function memoryOf(front: Front): { front: number; workerd: number[] } {
  return { front: rss(front.proc.pid!), workerd: workerdOf(front.proc.pid!).map(rss) };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const describe = (m: { front: number; workerd: number[] }) => `workerd ${m.workerd.map(mb).join(" + ")}, front ${mb(m.front)}`;

/** Spawns threads, `inFlight` at a time, until the front holds `count` of them. */
async function spawnUpTo(front: Front, ids: string[], count: number, inFlight = 32): Promise<void> {
  let next = ids.length;
  const worker = async () => {
    while (next < count) {
      next++;
      ids.push((await front.client.spawn({ title: "growth" })).threadId);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** Appends spread over `n` threads at once against the DO floor over `n` objects, in alternating slices. */
async function appendsOver(front: Front, floorUrl: string, ids: string[], n: number, row: Row, fmt: Fmt): Promise<void> {
  const paths = ids.slice(0, n).map((id) => `/threads/${id}/messages`);
  const floorPaths = Array.from({ length: n }, (_, i) => `/g${n}-${i}`);
  // Past a few hundred connections the load generator, not the runtime, is what is measured on two CPUs.
  const connections = Math.min(256, Math.max(16, n));
  // Each object written once first, as each thread was: what is measured is appends, not objects' creation.
  await writeOnce(floorUrl, floorPaths);
  await postLoad(front.url, paths, BODY, 1, connections);
  await postLoad(floorUrl, floorPaths, BODY, 1, connections);
  // Past 100 objects an append waits seconds for the disk (every object its own file to sync): slices long enough to see them end.
  const slice = n >= 100 ? 3 * SLICE_SECONDS : SLICE_SECONDS;
  const as: LoadResult[] = [];
  const bs: LoadResult[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const runtimeFirst = i % 2 === 0;
    const a1 = runtimeFirst ? await postLoad(front.url, paths, BODY, slice, connections) : null;
    const b = await postLoad(floorUrl, floorPaths, BODY, slice, connections);
    const a = a1 ?? (await postLoad(front.url, paths, BODY, slice, connections));
    as.push(a);
    bs.push(b);
    ratios.push(a.perSecond / b.perSecond);
  }
  const median = (xs: LoadResult[]) => [...xs].sort((x, y) => x.perSecond - y.perSecond)[Math.floor(xs.length / 2)]!;
  const rate = (r: LoadResult) => `${fmt(r.perSecond)}/s, p99 ${fmt(r.p99ms)} ms`;
  const errors = sum(as.map((r) => r.errors));
  row(
    `appends through the front, ${n} thread${n === 1 ? "" : "s"} written at once (c=${connections})`,
    rate(median(as)) + (errors ? `, ${errors} failed` : ""),
    `DO insert floor, ${n} object${n === 1 ? "" : "s"}: ${rate(median(bs))}`,
    fmt(percentile(ratios, 50), 2),
    n === 1000 ? ">= 1.0" : "",
  );
}

/** The first page of the thread list (the default page), read `n` times in sequence. */
async function firstPage(front: Front, threads: number, row: Row, fmt: Fmt, baseline: { threads: number; p50: number } | null): Promise<{ threads: number; p50: number }> {
  const read = () => fetch(`${front.url}/threads`).then(async (r) => {
    if (!r.ok) throw new Error(`GET /threads answered ${r.status}: ${await r.text()}`);
    return r.arrayBuffer();
  });
  await sequential(10, read);
  const t = await sequential(100, read);
  row(
    `the thread list's first page (GET /threads) at ${threads.toLocaleString("en")} threads (sequential)`,
    `p50 ${fmt(t.p50, 2)} ms, p99 ${fmt(t.p99, 2)} ms`,
    baseline ? `at ${baseline.threads.toLocaleString("en")} threads: p50 ${fmt(baseline.p50, 2)} ms` : "",
    baseline ? fmt(t.p50 / baseline.p50, 2) : "",
    baseline ? "<= 1.5" : "",
  );
  return { threads, p50: t.p50 };
}

const idle = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));

/** Writes once to each of `paths`, `inFlight` at a time. */
async function writeOnce(url: string, paths: string[], inFlight = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const post = () => fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
      // A keep-alive socket the server closed as it was reused (the floor's workerd under load): sent again.
      const r = await post().catch(post).catch(post);
      if (r.status !== 202) throw new Error(`an append answered ${r.status}: ${await r.text()}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

export async function growthRows(row: Row, fmt: Fmt, follow: (front: Front, followers: number) => Promise<void>): Promise<void> {
  // The list's first-page budget is the caller's guard against polling, not what is measured here.
  const front = await startFront({ env: { SERVICE_THREAD_LIST_BUDGET: "1000000" } });
  const mine = new Set(workerdOf(process.pid));
  const floor = await startDurableObjectFloor();
  const floorPid = workerdOf(process.pid).find((p) => !mine.has(p))!;
  try {
    const ids: string[] = [];
    await spawnUpTo(front, ids, 1);
    await writeOnce(front.url, [`/threads/${ids[0]}/messages`]);
    await writeOnce(floor.url, ["/warm"]);
    await idle(IDLE_SECONDS / 3);
    const empty = memoryOf(front);
    const floorEmpty = rss(floorPid);
    log(`growth: a front with one thread: ${describe(empty)}`);

    // The probe: 1,000 threads written once, then idle; the DO floor's 1,000 objects beside it.
    await spawnUpTo(front, ids, 1000);
    await writeOnce(front.url, ids.map((id) => `/threads/${id}/messages`));
    await writeOnce(floor.url, ids.map((_, i) => `/once-${i}`));
    const written = memoryOf(front);
    const floorWritten = rss(floorPid);
    log(`growth: 1,000 threads written once, then ${IDLE_SECONDS} s idle`);
    await idle(IDLE_SECONDS);
    const rested = memoryOf(front);
    const floorRested = rss(floorPid);
    const kb = (bytes: number) => `${fmt(bytes / 1000 / 1024)} KB a thread`;
    const perThread = (m: { workerd: number[] }) => sum(m.workerd) - sum(empty.workerd);
    row(
      "memory: 1,000 threads spawned and written once, in workerd (over one thread's)",
      `${describe(written)}; ${kb(perThread(written))}`,
      `DO floor, 1,000 objects written once: ${kb(floorWritten - floorEmpty)}`,
      fmt(perThread(written) / (floorWritten - floorEmpty), 1),
      "",
    );
    row(
      `memory: the same 1,000 threads after ${IDLE_SECONDS} s idle, in workerd`,
      `${describe(rested)}; ${kb(perThread(rested))}`,
      `DO floor after the same idle: ${kb(floorRested - floorEmpty)}`,
      fmt(perThread(rested) / (floorRested - floorEmpty), 1),
      "< 50 KB a thread, returned when idle",
    );
    // Past the catalog's safety net, a minute after the writes: an alarm left set builds every thread again.
    await idle(Math.max(0, 75 - IDLE_SECONDS));
    const later = memoryOf(front);
    row(`memory: the same 1,000 threads ${Math.max(75, IDLE_SECONDS)} s after their writes, in workerd`, `${describe(later)}; ${kb(perThread(later))}`, `after ${IDLE_SECONDS} s: ${kb(perThread(rested))}`, "", "");

    for (const n of [1, 10, 100, 1000]) {
      log(`growth: appends over ${n} threads`);
      await appendsOver(front, floor.url, ids, n, row, fmt);
    }

    let small: { threads: number; p50: number } | null = null;
    for (const n of [100, 1000, THREADS]) {
      if (ids.length < n) {
        log(`growth: spawning up to ${n} threads`);
        const t = performance.now();
        const from = ids.length;
        await spawnUpTo(front, ids, n);
        row(
          `memory: ${n.toLocaleString("en")} threads (${(n - from).toLocaleString("en")} more spawned, 32 at once, ${fmt(((n - from) / (performance.now() - t)) * 1000)}/s), in workerd`,
          describe(memoryOf(front)),
          `1,000 threads written once, idle: ${describe(rested)}`,
          "",
          "",
        );
      }
      const page = await firstPage(front, n, row, fmt, small);
      small ??= page;
    }
    await idle(IDLE_SECONDS);
    row(`memory: ${THREADS.toLocaleString("en")} threads after ${IDLE_SECONDS} s idle, in workerd`, describe(memoryOf(front)), "", "", "");

    for (const followers of [10, 100, 1000, 2000]) {
      log(`growth: follow with ${followers} followers`);
      await follow(front, followers);
    }
  } catch (err) {
    log(`growth failed; the front's last output:\n${front.output().slice(-4000)}`);
    throw err;
  } finally {
    await floor.close();
    await front.stop();
    removeDir(front.dataDir);
  }
}
