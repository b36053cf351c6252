import { routePath } from "hono/route";
import { createMiddleware } from "hono/factory";
import type { RouteTiming } from "../api/operator.js";
import type { AppEnv } from "./app-env.js";

/** Durations kept per route: enough for a stable p99, bounded memory. */
const SAMPLES = 1024;

export interface RouteStats {
  count: number;
  errors: number;
  maxMs: number;
  /** The latest SAMPLES durations, as a ring. */
  recent: number[];
  next: number;
}

const stats = new Map<string, RouteStats>();

/**
 * Times every request by its route pattern (`GET /threads/:id/tail`), in this isolate's
 * memory since it started. For a streaming answer it is the time to the response head:
 * what a caller waited before anything arrived.
 */
export const timings = createMiddleware<AppEnv>(async (c, next) => {
  const started = performance.now();
  await next();
  const path = routePath(c, -1);
  // Middleware patterns match every path: a request no route claimed ends on one.
  const route = `${c.req.method} ${path === "/*" || path === "*" ? "(no route)" : path}`;
  const ms = performance.now() - started;
  let s = stats.get(route);
  if (!s) stats.set(route, (s = { count: 0, errors: 0, maxMs: 0, recent: [], next: 0 }));
  s.count++;
  if (c.res.status >= 500) s.errors++;
  s.maxMs = Math.max(s.maxMs, ms);
  if (s.recent.length < SAMPLES) s.recent.push(ms);
  else s.recent[s.next] = ms;
  s.next = (s.next + 1) % SAMPLES;
});

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** This isolate's raw figures, for another router to merge into its own (src/platform/shard-peer.ts). */
export function routeStats(): [string, RouteStats][] {
  return [...stats.entries()];
}

/** Per-route figures: this isolate's, merged with those of the other shards' routers. */
export function routeTimings(others: [string, RouteStats][] = []): RouteTiming[] {
  const merged = new Map<string, RouteStats>();
  for (const [route, s] of [...stats.entries(), ...others]) {
    const m = merged.get(route);
    if (!m) merged.set(route, { ...s, recent: [...s.recent] });
    else {
      m.count += s.count;
      m.errors += s.errors;
      m.maxMs = Math.max(m.maxMs, s.maxMs);
      m.recent.push(...s.recent);
    }
  }
  return [...merged.entries()]
    .map(([route, s]) => {
      const sorted = [...s.recent].sort((a, b) => a - b);
      return {
        route,
        count: s.count,
        errors: s.errors,
        p50Ms: round(quantile(sorted, 0.5)),
        p95Ms: round(quantile(sorted, 0.95)),
        p99Ms: round(quantile(sorted, 0.99)),
        maxMs: round(s.maxMs),
      };
    })
    .sort((a, b) => b.count - a.count);
}
