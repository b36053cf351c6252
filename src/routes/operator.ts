import { Hono, type Context } from "hono";
import { accountViews } from "../platform/account-pool.js";
import { CODES } from "../api/errors.js";
import { DRAIN_RETRY_AFTER_SECONDS } from "../api/drain.js";
import { TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT, TAIL_MAX_WAIT_MS } from "../api/tail.js";
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from "../api/threads.js";
import type { AppEnv } from "../http/app-env.js";
import type { Env } from "../platform/env.js";
import { catalogOf, hostOf } from "../platform/stubs.js";
import { orNull, PEER_PATIENCE_MS, shardPeer } from "../platform/peer.js";
import { exhaustion } from "../rules/exhaustion.js";
import { refused } from "../http/answer.js";
import { prometheus, type MetricsDoc } from "../http/prometheus.js";
import { routeTimings, type RouteStats } from "../http/timings.js";
import { hubLimits } from "../platform/hub-limits.js";
import { buildSeatsOf } from "../flows/pr-work.js";
import { serve } from "../http/serve.js";

/** SPEC "Operating the host": the keeper, load, limits, timings and metrics (docs/operating.md). */
export const operator = new Hono<AppEnv>();

const HISTORY_DEFAULT_MS = 60 * 60_000;

serve(operator, "GET /keeper/spawn-pause", async (c) => c.json(await hostOf(c.env).spawnPause()));

serve(operator, "POST /keeper/spawn-pause/clear", async (c) => {
  return c.json(await hostOf(c.env).clearSpawnPause(c.req.valid("json").reason));
});

serve(operator, "GET /host-load", async (c) => {
  const r = await hostOf(c.env).lastHostReport();
  if (!r) refused(503, "the front has not measured the machine yet", CODES.hostLoadUnknown, undefined, { "retry-after": "5" });
  return c.json({ at: r.at, load: { "1m": r.load[0], "5m": r.load[1], "15m": r.load[2] }, cpus: r.cpus, memory: r.memory, deviceSimulators: r.deviceSimulators });
});

serve(operator, "GET /live", async (c) => {
  const { running } = await hostOf(c.env).spawnGate();
  const [summaries, views] = await Promise.all([catalogOf(c.env).summaries(running), accountViews(c.env)]);
  const sessions = summaries.map((s) => ({ threadId: s.id, workspace: s.workspace, engine: s.engine, model: s.model, stage: s.stage, since: s.updatedAt }));
  return c.json({
    threads: running,
    sessions,
    sessionCap: c.var.config.sessionCap,
    exhaustion: views ? exhaustion(c.var.config, views) : null,
    ...(views ? {} : { accountPool: "the account pool did not answer" }),
  });
});

serve(operator, "GET /limits", async (c) => {
  const config = c.var.config;
  const pause = await hostOf(c.env).spawnPause();
  const hub = await hubLimits(config.hubUrl);
  return c.json({
    hub,
    buildThreadsPerPullRequest: buildSeatsOf(hub),
    sessionCap: config.sessionCap,
    sessionIdleEvictMs: config.sessionIdleMs,
    threadListFirstPagesPerMinute: config.threadListBudget,
    streamSubscribersPerThread: config.streamSubscribers,
    threadPage: { default: LIST_DEFAULT_LIMIT, max: LIST_MAX_LIMIT },
    tailPage: { default: TAIL_DEFAULT_LIMIT, max: TAIL_MAX_LIMIT },
    tailWaitMaxMs: TAIL_MAX_WAIT_MS,
    blobThresholdBytes: config.blobThreshold,
    maxBodyBytes: config.maxBody,
    spawnPause: { pauseBelowBytes: pause.pauseBelowBytes, resumeAboveBytes: pause.resumeAboveBytes },
    drainRetryAfterS: DRAIN_RETRY_AFTER_SECONDS,
  });
});

/** When this isolate began timing requests. */
const timedSince = new Date().toISOString();

/**
 * Timings of both workerd processes when the host runs two (docs/decisions.md, "Two
 * workerd processes"); this one's alone if the other does not answer in time.
 */
async function allTimings(env: Env) {
  const shard = shardPeer(env);
  const others = shard ? await orNull(shard.peer.routeStats(shard.token) as Promise<[string, RouteStats][]>, PEER_PATIENCE_MS, "timings") : null;
  return routeTimings(others ?? []);
}

serve(operator, "GET /timings", async (c) => c.json({ since: timedSince, routes: await allTimings(c.env) }));

async function metrics(c: Context<AppEnv>): Promise<MetricsDoc & { at: string }> {
  const host = hostOf(c.env);
  const [estate, gate, incidents, views] = await Promise.all([catalogOf(c.env).estate(), host.spawnGate(), host.incidents(0), accountViews(c.env)]);
  const last = await host.lastHostReport();
  return {
    at: new Date().toISOString(),
    threads: { live: estate.live, archived: estate.archived, byStage: estate.byStage },
    turns: { running: gate.running.length, sessionCap: c.var.config.sessionCap },
    spawnsPaused: gate.pause.paused,
    disk: last ? { freeBytes: last.disk.freeBytes, totalBytes: last.disk.totalBytes } : null,
    load: last ? (last.load as [number, number, number]) : null,
    failures: incidents.reduce((n, i) => n + i.failures, 0),
    accounts: views ? { total: views.length, coolingDown: views.filter((v) => v.health.coolingDownUntil).length } : null,
    cost: estate.cost,
    requests: await allTimings(c.env),
  };
}

serve(operator, "GET /metrics", async (c) => {
  const m = await metrics(c);
  const wantsText = c.req.query("format") === "prometheus" || /text\/plain|openmetrics/.test(c.req.header("accept") ?? "");
  if (!wantsText) return c.json(m);
  return c.body(prometheus(m), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
});

serve(operator, "GET /metrics/history", async (c) => {
  const raw = c.req.query("since");
  if (raw !== undefined && !/^\d{1,16}$/.test(raw)) refused(400, `since must be epoch milliseconds, not ${JSON.stringify(raw)}`, CODES.invalidQuery);
  const since = raw === undefined ? Date.now() - HISTORY_DEFAULT_MS : Number(raw);
  const samples = await hostOf(c.env).hostSamples(since);
  return c.json({
    since,
    intervalMs: null,
    samples: samples.map((s) => ({ at: s.at, freeBytes: s.disk.freeBytes, load1m: s.load[0], memoryFreeBytes: s.memory.freeBytes, running: s.running })),
  });
}, ["query"]);

serve(operator, "GET /metrics/estate", async (c) => c.json(await catalogOf(c.env).estate()));

serve(operator, "GET /metrics/keeper", async (c) => {
  const host = hostOf(c.env);
  const [pause, samples] = await Promise.all([host.spawnPause(), host.hostSamples(Date.now() - 24 * 60 * 60_000)]);
  return c.json({ spawnPause: pause, freeBytes: samples.map((s) => ({ at: s.at, freeBytes: s.disk.freeBytes })) });
});

