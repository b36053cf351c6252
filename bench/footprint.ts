/**
 * The footprint rows of `npm run bench` (issue 32): what the front and the processes under
 * it hold in memory, right after the start, after 30 s idle with no call, and after 20
 * threads with a turn each and 30 s idle; and what the front spent in CPU to its first
 * /health answer. workerd's share apart (its two processes compile and keep the worker's
 * bundle), and the bundle's size.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { removeDir, startFront } from "../test/support/front.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const IDLE_MS = Number(process.env.BENCH_FOOTPRINT_IDLE_MS ?? 30_000);

const rssMb = (pid: number): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  } catch {
    return 0;
  }
};

/** `pid` and every process under it. */
function tree(pid: number): number[] {
  const pairs = execFileSync("ps", ["-eo", "pid=,ppid="], { encoding: "utf8" }).trim().split("\n").map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const under = (p: number): number[] => [p, ...pairs.filter(([, parent]) => parent === p).flatMap(([child]) => under(child))];
  return under(pid);
}

/** The workerd processes among `pids`. */
const workerds = (pids: number[]): number[] =>
  pids.filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "workerd";
    } catch {
      return false;
    }
  });

/** The CPU (user and system, in ms) `pid` has used so far, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export async function footprintRows(row: Row, fmt: Fmt): Promise<void> {
  const front = await startFront();
  try {
    const pid = front.proc.pid!;
    const cpu = cpuMs(pid);
    const atStart = { front: rssMb(pid), tree: tree(pid).reduce((s, p) => s + rssMb(p), 0) };
    const shards = workerds(tree(pid));
    const shardCpu = shards.reduce((s, p) => s + cpuMs(p), 0);
    const shardRss = () => shards.reduce((s, p) => s + rssMb(p), 0);
    const shardsAtStart = shardRss();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleStart = { front: rssMb(pid), tree: tree(pid).reduce((s, p) => s + rssMb(p), 0) };
    const shardsIdleStart = shardRss();
    for (let i = 0; i < 20; i++) {
      const { threadId } = await front.client.spawn();
      const r = await front.client.send(threadId, { text: "ping" });
      if (r.outcome !== "completed") throw new Error(`bench: a turn failed: ${JSON.stringify(r.failure)}`);
    }
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const procs = tree(pid);
    const idle = { front: rssMb(pid), tree: procs.reduce((s, p) => s + rssMb(p), 0) };
    const shardsIdle = shardRss();
    row("the front's CPU from its process's start to the start line (user and system)", `${fmt(cpu)} ms`, "", "", "");
    row("the front's memory (RSS) at the start line", `${fmt(atStart.front)} MB`, `the front and every process under it: ${fmt(atStart.tree)} MB`, "", "< 150 MB");
    row(`the front's memory (RSS) ${IDLE_MS / 1000} s idle after its start line, before any call`, `${fmt(idleStart.front)} MB`, `the front and every process under it: ${fmt(idleStart.tree)} MB`, "", "< 150 MB");
    row(`the front's memory (RSS) after 20 threads with a turn each, then ${IDLE_MS / 1000} s idle`, `${fmt(idle.front)} MB`, `the front and every process under it (${procs.length}): ${fmt(idle.tree)} MB`, "", "< 150 MB");
    const bundle = readFileSync(resolve(import.meta.dirname, "..", ".front", "worker.js"), "utf8");
    row("the worker's bundle, which each workerd process compiles at its start", `${fmt(Buffer.byteLength(bundle.slice(bundle.indexOf("\n") + 1)) / 1024)} KB`, "", "", "");
    row(`workerd's CPU from its spawn to the front's start line (its ${shards.length} processes, user and system)`, `${fmt(shardCpu)} ms`, "", "", "");
    row(
      `workerd's memory (RSS, its ${shards.length} processes) at the start line`,
      `${fmt(shardsAtStart)} MB`,
      `${IDLE_MS / 1000} s idle: ${fmt(shardsIdleStart)} MB; after 20 threads with a turn each and ${IDLE_MS / 1000} s idle: ${fmt(shardsIdle)} MB`,
      "",
      "",
    );
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
}
