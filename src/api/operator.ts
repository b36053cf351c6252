/** SPEC "Operating the host": what the operator routes answer, and what the front reports. */
import * as z from "zod";
import { PROVIDERS } from "./accounts.js";
import { EngineEntry, SandboxReport } from "./engines.js";
import { MemoryAlert } from "./memory.js";
import { ENGINES, THREAD_STAGES } from "./threads.js";
import { Incident } from "./turns.js";

/** What the front measures of the machine, every `SERVICE_KEEPER_INTERVAL_MS`. */
export const HostReport = z.object({
  at: z.string(),
  disk: z.object({ path: z.string(), freeBytes: z.number().nonnegative(), totalBytes: z.number().nonnegative() }),
  /** 1, 5 and 15 minute load averages. */
  load: z.tuple([z.number(), z.number(), z.number()]),
  cpus: z.number().int().positive(),
  memory: z.object({ freeBytes: z.number().nonnegative(), totalBytes: z.number().nonnegative() }),
  /** Booted device simulators (iOS/Android); none on a machine without them. */
  deviceSimulators: z.array(z.object({ name: z.string(), runtime: z.string() })),
});
export type HostReport = z.infer<typeof HostReport>;

/** A report as the Host object keeps it, with the turns running at that moment. */
export type HostSample = HostReport & { running: number };

export const KeeperThresholds = z.object({
  pauseBelowBytes: z.number().nonnegative(),
  resumeAboveBytes: z.number().nonnegative(),
  /** What a `spawns-paused` refusal tells the caller to wait: the next measurement. */
  retryAfterS: z.number().int().positive(),
});
export type KeeperThresholds = z.infer<typeof KeeperThresholds>;

/** `POST /internal/host-report`. */
export const HostReportBody = z.object({ report: HostReport, thresholds: KeeperThresholds });

/** `GET /keeper/spawn-pause`, and what clearing it and the front's report answer: the disk keeper's spawn pause. */
export const SpawnPause = z.object({
  paused: z.boolean(),
  since: z.string().nullable(),
  reason: z.string().nullable(),
  /** The last operator clear, while it holds (until free space recovers over the resume threshold). */
  cleared: z.object({ at: z.string(), reason: z.string() }).nullable(),
  freeBytes: z.number().nullable(),
  totalBytes: z.number().nullable(),
  checkedAt: z.string().nullable(),
  pauseBelowBytes: z.number().nullable(),
  resumeAboveBytes: z.number().nullable(),
  retryAfterS: z.number().int().nullable(),
});
export type SpawnPause = z.infer<typeof SpawnPause>;

export const ClearSpawnPause = z.object({ reason: z.string().trim().min(1, "reason is required").max(500) }).strict();

/** One route's request timings since the worker started. */
export const RouteTiming = z.object({
  route: z.string(),
  count: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  p50Ms: z.number(),
  p95Ms: z.number(),
  p99Ms: z.number(),
  maxMs: z.number(),
});
export type RouteTiming = z.infer<typeof RouteTiming>;

/** `GET /timings`: since when this isolate timed requests, and each route's timings. */
export const Timings = z.object({ since: z.string(), routes: z.array(RouteTiming) });
export type Timings = z.infer<typeof Timings>;

const Counts = z.record(z.string(), z.number().int().nonnegative());
const Spend = z.object({ usd: z.number(), inputTokens: z.number(), outputTokens: z.number() });

/** `GET /metrics/estate`: the host's threads as the catalog counts them (live ones in the breakdowns; `(none)` for a null). */
export const Estate = z.object({
  live: z.number().int().nonnegative(),
  archived: z.number().int().nonnegative(),
  byType: Counts,
  byRole: Counts,
  byStage: Counts,
  byWorkspace: Counts,
  cost: Spend,
});
export type Estate = z.infer<typeof Estate>;

/** `GET /incidents`: failed turns since `since` (epoch ms) within the window, grouped. */
export const Incidents = z.object({ since: z.number().int().nonnegative(), windowHours: z.number().int().positive(), incidents: z.array(Incident) });

/** `GET /host-load`: the front's last measurement of the machine. */
export const HostLoad = z.object({
  at: z.string(),
  load: z.object({ "1m": z.number(), "5m": z.number(), "15m": z.number() }),
  cpus: HostReport.shape.cpus,
  memory: HostReport.shape.memory,
  deviceSimulators: HostReport.shape.deviceSimulators,
});

/** An open account-pool exhaustion episode: a workspace's roster (or the unclaimed pool) with every account of a provider cooling down. */
export const ExhaustionEpisode = z.object({
  /** The workspace whose roster it is; null for the accounts no workspace claims. */
  workspace: z.string().nullable(),
  provider: z.enum(PROVIDERS),
  accounts: z.array(z.object({ id: z.string(), lastFailureClass: z.string().nullable(), coolingDownUntil: z.string().nullable() })),
  since: z.string().nullable(),
  /** When the first of them comes back. */
  until: z.string(),
});
export type ExhaustionEpisode = z.infer<typeof ExhaustionEpisode>;

/** `GET /live`: the threads whose turns run or wait on a person, and exhaustion episodes (null, with `accountPool` saying why, when the pool did not answer). */
export const Live = z.object({
  threads: z.array(z.string()),
  sessions: z.array(z.object({ threadId: z.string(), workspace: z.string().nullable(), engine: z.enum(ENGINES), model: z.string(), stage: z.enum(THREAD_STAGES), since: z.string() })),
  sessionCap: z.number().int().positive(),
  exhaustion: z.array(ExhaustionEpisode).nullable(),
  accountPool: z.string().optional(),
});

/** The build seat limit as the hub reports it (`note` when there is no hub, `error` when it did not say). */
export const HubLimits = z.object({ url: z.string().nullable(), buildSeatLimit: z.number().nullable(), note: z.string().optional(), error: z.string().optional() });
export type HubLimits = z.infer<typeof HubLimits>;

const PageLimits = z.object({ default: z.number().int().positive(), max: z.number().int().positive() });

/** `GET /limits`. */
export const Limits = z.object({
  hub: HubLimits,
  buildThreadsPerPullRequest: z.object({ limit: z.number().int().positive(), source: z.enum(["hub", "default"]) }),
  sessionCap: z.number().int().positive(),
  sessionIdleEvictMs: z.number().int().positive(),
  threadListFirstPagesPerMinute: z.number().int().positive(),
  streamSubscribersPerThread: z.number().int().positive(),
  threadPage: PageLimits,
  tailPage: PageLimits,
  tailWaitMaxMs: z.number().int().positive(),
  blobThresholdBytes: z.number().int().positive(),
  maxBodyBytes: z.number().int().positive(),
  spawnPause: SpawnPause.pick({ pauseBelowBytes: true, resumeAboveBytes: true }),
  drainRetryAfterS: z.number().int().positive(),
});

/** `GET /metrics` as JSON (the Prometheus text is made from it). */
export const Metrics = z.object({
  at: z.string(),
  threads: Estate.pick({ live: true, archived: true, byStage: true }),
  turns: z.object({ running: z.number().int().nonnegative(), sessionCap: z.number().int().positive() }),
  spawnsPaused: z.boolean(),
  disk: z.object({ freeBytes: z.number(), totalBytes: z.number() }).nullable(),
  /** 1, 5 and 15 minute load averages. */
  load: HostReport.shape.load.nullable(),
  /** Failed turns in the incident window. */
  failures: z.number().int().nonnegative(),
  accounts: z.object({ total: z.number().int().nonnegative(), coolingDown: z.number().int().nonnegative() }).nullable(),
  cost: Spend,
  requests: z.array(RouteTiming),
});
export type Metrics = z.infer<typeof Metrics>;

/** `GET /metrics/history`: the front's samples since `since` (epoch ms); they come when the front measures, at no fixed interval. */
export const MetricsHistory = z.object({
  since: z.number().int().nonnegative(),
  intervalMs: z.null(),
  samples: z.array(z.object({ at: z.string(), freeBytes: z.number(), load1m: z.number(), memoryFreeBytes: z.number(), running: z.number().int().nonnegative() })),
});

/** `GET /metrics/keeper`: the spawn pause and the last 24 hours of free space. */
export const KeeperMetrics = z.object({ spawnPause: SpawnPause, freeBytes: z.array(z.object({ at: z.string(), freeBytes: z.number() })) });

export const ATTENTION_KINDS = ["approval", "question", "degraded", "spawn-pause", "accounts-exhausted", "storage-full"] as const;

/**
 * Whether the data volume takes writes (`GET /health` `storage`): `full` from the first
 * write it refused for want of space until a write succeeds again; `unknown` when the
 * Host did not answer. `refusals` counts the writes refused since `since`.
 */
export const StorageState = z.discriminatedUnion("state", [
  z.object({ state: z.literal("ok") }),
  z.object({ state: z.literal("full"), since: z.string(), lastAt: z.string(), reason: z.string(), refusals: z.number().int().nonnegative(), threadIds: z.array(z.string()) }),
  z.object({ state: z.literal("unknown") }),
]);
export type StorageState = z.infer<typeof StorageState>;

/** `GET /health`: the runtime serves (`ok`), and whether sessions can run here: the sandbox and each engine, with why not. */
export const Health = z.object({
  ok: z.boolean(),
  build: z.string(),
  sandbox: SandboxReport,
  /** Null when the engine host did not answer. */
  engines: z.array(EngineEntry.pick({ engine: true, available: true, reason: true })).nullable(),
  /** Each field `/spawn` takes, with its accepted values or its type. */
  spawn: z.object({ fields: z.record(z.string(), z.union([z.string(), z.array(z.string())])) }),
  /** Whether the data volume takes writes. */
  storage: StorageState,
  /** The alert open longest of `memoryAlerts`. */
  memoryAlert: MemoryAlert.nullable(),
  /** A retain that could not be stored, per workspace; null (and `memoryAlertsUnknown`) when the Host did not answer. */
  memoryAlerts: z.array(MemoryAlert).nullable(),
  memoryAlertsUnknown: z.literal(true).optional(),
});
export type Health = z.infer<typeof Health>;

/** Something that needs a person (`GET /attention`); `id` is stable while the item is open. */
export const AttentionItem = z.object({
  id: z.string(),
  kind: z.enum(ATTENTION_KINDS),
  /** One line for a person. */
  title: z.string(),
  threadId: z.string().nullable(),
  workspace: z.string().nullable(),
  /** When it began, as far as the host knows. */
  since: z.string().nullable(),
  /** Where to act on it. */
  action: z.string(),
  /** What the kind adds (an approval's tool, a question's text, ...). */
  detail: z.record(z.string(), z.unknown()),
});
export type AttentionItem = z.infer<typeof AttentionItem>;

/** `GET /attention`: the open items, and the board's change seq they are as of. */
export const AttentionBoard = z.object({ items: z.array(AttentionItem), seq: z.number().int().nonnegative() });

/** One entry of `/attention/changes` and `/attention/follow`. */
export const AttentionChange = z.object({
  seq: z.number().int().positive(),
  at: z.string(),
  change: z.enum(["opened", "updated", "closed"]),
  id: z.string(),
  /** The item as it is now; for `closed`, as it was last seen. */
  item: AttentionItem,
});
export type AttentionChange = z.infer<typeof AttentionChange>;

/** `GET /attention/changes`: a page of changes after a cursor. */
export const AttentionChanges = z.object({ changes: z.array(AttentionChange), nextAfter: z.string(), hasMore: z.boolean() });

/** `POST /peers/external`: a peer that records threads here without an engine on this host. */
export const ExternalPeerBody = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "letters, digits, '.', '_' or '-', at most 64"),
    url: z.string().url().optional(),
    description: z.string().max(500).optional(),
  })
  .strict();

export const ExternalPeer = z.object({ name: z.string(), url: z.string().nullable(), description: z.string().nullable(), registeredAt: z.string() });
export type ExternalPeer = z.infer<typeof ExternalPeer>;

/** `GET /peers`: this host (its engines; null, with `error`, when the engine host did not answer), then the external peers. */
export const PeerList = z.object({
  peers: z.array(
    z.union([
      z.object({ name: z.literal("local"), kind: z.literal("local"), engines: z.array(EngineEntry).nullable(), error: z.string().optional() }),
      ExternalPeer.extend({ kind: z.literal("external") }),
    ]),
  ),
});

/** `GET /openapi.json`: the OpenAPI 3.1 document of every route; OpenAPI's own schema says the rest of it. */
export const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/** What a DELETE of a peer or a preview answers: the name or id removed. */
export const Removed = z.object({ removed: z.string() });

/** `POST /previews`: a local server a thread started, to be looked at in a browser. */
export const PreviewBody = z
  .object({
    threadId: z.string().min(1),
    port: z.number().int().min(1).max(65535),
    command: z.string().min(1).max(4096),
    title: z.string().max(200).optional(),
    path: z.string().startsWith("/").max(2048).optional(),
  })
  .strict();

export const Preview = z.object({
  id: z.string(),
  threadId: z.string(),
  port: z.number().int(),
  command: z.string(),
  title: z.string().nullable(),
  url: z.string(),
  createdAt: z.string(),
  /** `up` when the port answered HTTP just now, `down` when it did not. */
  status: z.enum(["up", "down"]),
  checkedAt: z.string(),
});
export type Preview = z.infer<typeof Preview>;

/** `GET /previews`. */
export const PreviewList = z.object({ previews: z.array(Preview) });

/** `POST /internal/boot-sweep`: each thread that was mid-turn, whether it runs now, or why it could not be asked. */
export const BootSweep = z.object({ swept: z.array(z.union([z.object({ id: z.string(), running: z.boolean() }), z.object({ id: z.string(), error: z.string() })])) });
