import autocannon from "autocannon";

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
