import autocannon from "autocannon";
import { readdirSync, readFileSync } from "node:fs";

export interface LoadResult {
  ok: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
}

/**
 * A closed loop of `connections` keep-alive clients POSTing JSON, spread over `paths`.
 * Only 2xx answers count: an append is measured when it was acknowledged.
 */
export async function postLoad(origin: string, paths: string[], body: string, seconds: number, connections = 16, headers: Record<string, string> = {}): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url: origin,
    connections,
    duration: seconds,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
        setupRequest: (req: autocannon.Request) => ({ ...req, path: paths[i++ % paths.length]! }),
      },
    ],
  });
  const ok = result["2xx"];
  return {
    ok,
    errors: result.non2xx + result.errors + result.timeouts,
    seconds,
    perSecond: ok / seconds,
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
  };
}

/** Latency of one request repeated `n` times in sequence: p50 and p99 in ms. */
export async function sequential(n: number, call: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** utime + stime of one process, in clock ticks, and its parent's pid; null once it is gone. */
function statOf(pid: number): { ppid: number; ticks: number } | null {
  try {
    // The command name may hold spaces and parentheses: the fields start after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** CPU time (user and system) spent so far by one process, all its threads, in ms; null once it is gone or where there is no /proc. */
export function processCpuMs(pid: number): number | null {
  const stat = statOf(pid);
  return stat && stat.ticks * 10;
}

/**
 * CPU time (user and system) spent so far by a process and every process under it, in ms,
 * from Linux's /proc (100 clock ticks a second); null where there is no /proc. Taken
 * before and after a phase, it says what the phase cost in CPU whichever process did the
 * work, which wall time on a shared 2-core machine hides.
 */
export function treeCpuMs(root: number): number | null {
  let pids: number[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return null;
  }
  const stats = new Map(pids.map((pid) => [pid, statOf(pid)] as const));
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      if (p === root) return true;
      p = stats.get(p)?.ppid ?? 0;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, stat] of stats) if (stat && inTree(pid)) ticks += stat.ticks;
  return ticks * 10;
}

