import type { PublicAccount } from "../api/accounts.js";
import { ON_BUSY, type OnBusy } from "../api/threads.js";
import { WorkspacesFile, type WorkspaceConfig } from "../api/workspaces.js";
import { readCallerPolicy, type CallerPolicy } from "../rules/caller-policy.js";

/** Reads a variable's text (its default when unset) into the value the runtime uses. */
type Parser<T> = (raw: string | undefined, fallback: string | null) => T;

/** A bad number falls back to the default rather than stopping a worker that is already deployed. */
const positive: Parser<number> = (raw, fallback) => {
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : Number(fallback);
};
const whole: Parser<number> = (raw, fallback) => {
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(n) && n >= 0 ? Math.floor(n) : Number(fallback);
};
const onBusy: Parser<OnBusy> = (raw, fallback) => ((ON_BUSY as readonly string[]).includes(raw ?? "") ? (raw as OnBusy) : (fallback as OnBusy));
const text: Parser<string> = (raw, fallback) => raw || fallback || "";
const optional: Parser<string | null> = (raw) => raw || null;
const on: Parser<boolean> = (raw) => raw === "on";
const names: Parser<Set<string>> = (raw) => new Set((raw ?? "").split(",").map((f) => f.trim()).filter(Boolean));

/**
 * One variable of the worker. `operator` variables are the user's: wrangler.toml sets the
 * defaults, and the front passes the user's own value through (local-front/process/config.ts);
 * `doc` is their line in the README's configuration table. `front` variables are set by
 * the front at each boot; those without a parser are read where they are used, as `env`.
 */
interface Setting<N extends string, T> {
  name: N;
  source: "operator" | "front";
  default: string | null;
  read: Parser<T>;
  doc: string;
}
type Raw<N extends string> = Omit<Setting<N, never>, "read"> & { read: null };

const operator = <const N extends string, T>(name: N, read: Parser<T>, fallback: string | null, doc: string): Setting<N, T> => ({
  name,
  source: "operator",
  default: fallback,
  read,
  doc,
});
const front = <const N extends string, T>(name: N, doc: string, read: Parser<T>, fallback: string | null = null): Setting<N, T> => ({
  name,
  source: "front",
  default: fallback,
  read,
  doc,
});
const raw = <const N extends string>(name: N, doc: string): Raw<N> => ({ name, source: "front", default: null, read: null, doc });

/**
 * The worker's configuration, each variable once: the `Env` type, `readConfig`, the
 * front's pass-through, wrangler.toml's [vars] and the README's table all follow from it
 * (test/unit/config-table.test.ts fails when one of them drifts).
 */
export const SETTINGS = {
  blobThreshold: operator("SERVICE_AGENTS_BLOB_THRESHOLD", positive, "65536", "Event bodies larger than this many bytes are stored apart from the log"),
  attachmentMaxBytes: operator("SERVICE_ATTACHMENT_MAX_BYTES", positive, "5242880", "Largest attachment of a message, in bytes; a larger one is refused with 413 `attachment-too-large`"),
  maxBody: operator("SERVICE_AGENTS_MAX_BODY", positive, "8388608", "Largest request body; larger ones get 413"),
  heartbeatMs: operator("SERVICE_SSE_HEARTBEAT_MS", positive, "15000", "Heartbeat comment on idle SSE streams"),
  streamSubscribers: operator("SERVICE_STREAM_SUBSCRIBERS", positive, "64", "`stream` readers allowed per thread; one more gets 429"),
  streamBuffer: operator("SERVICE_STREAM_BUFFER", positive, "256", "Frames queued per `stream` reader before its oldest are dropped"),
  defaultModel: operator("SERVICE_DEFAULT_MODEL", text, "sim-1", "Model of a spawn that names none (and no `engine_a`)"),
  catalogSyncMs: operator("SERVICE_CATALOG_SYNC_MS", positive, "1000", "How often a busy thread's activity reaches the thread list"),
  catalogSafetyMs: operator("SERVICE_CATALOG_SAFETY_MS", positive, "60000", "How long after a thread's activity its durable alarm pushes it to the thread list, should the in-memory push have been lost with its instance"),
  completionsDefaultWorkspace: operator("SERVICE_COMPLETIONS_DEFAULT_WORKSPACE", optional, null, "Workspace charged by completions calls without `x-service-workspace`"),
  sessionCap: operator("SERVICE_SESSION_CAP", positive, "16", "Live sessions (turns running or waiting on a person) before spawns and forks get 429 `session-cap`"),
  sessionIdleMs: operator("SERVICE_SESSION_IDLE_MS", positive, "1800000", "How long a session must have waited on a person before it is evicted to make room at the cap"),
  threadListBudget: operator("SERVICE_THREAD_LIST_BUDGET", positive, "120", "First pages of `GET /threads` one client may ask for per minute (429 `thread-list-rate-limited`)"),
  hubUrl: operator("SERVICE_HUB_URL", optional, null, "The review hub; `GET /limits` reads the build seat limit from its `/limits`"),
  allowedHosts: operator("SERVICE_ALLOWED_HOSTS", optional, null, "Host names (`name` or `name:port`, comma-separated) that name the runtime besides the loopback ones; any other `Host` gets 403 `untrusted-caller` on every route (`docs/operating.md`, \"Callers\")"),
  allowedOrigins: operator("SERVICE_ALLOWED_ORIGINS", optional, null, "Browser origins (`scheme://host[:port]`, comma-separated) allowed to call and given CORS answers, besides the runtime's own and the application server's (`http://127.0.0.1:5189`, `http://localhost:5189`)"),
  interruptGraceMs: operator("SERVICE_INTERRUPT_GRACE_MS", positive, "5000", "How long an interrupt waits for the engine before the thread cuts the turn"),
  windowWarnPercent: operator("SERVICE_WINDOW_WARN_PERCENT", positive, "70", "The warning line: a `window-pending` (`forced: false`) once a thread's context passes this share of its model's window (docs/compaction.md)"),
  windowReserveTokens: operator("SERVICE_WINDOW_RESERVE_TOKENS", positive, "1024", "Tokens kept free for the answer: a context that would leave fewer is a forced window (at most a quarter of the window)"),
  windowDeadlineMs: operator("SERVICE_WINDOW_DEADLINE_MS", whole, "10000", "How long a forced window waits for `POST /threads/:id/compact` before the runtime reduces the context its own way; waited only when two modes or more would each make room (otherwise the runtime reduces at once, docs/compaction.md)"),
  handoffTimeoutMs: operator("SERVICE_HANDOFF_TIMEOUT_MS", whole, "0", "How long a handoff offer waits to be accepted or declined before it is cancelled (`handoff-cancelled` with `expired: true`); 0: until it is answered (docs/seats.md)"),
  curatorModel: operator("SERVICE_CURATOR_MODEL", optional, null, "The model that writes `summary` reductions, handoff summaries and memory reflections (through pi-ai, on the accounts of its provider); unset: the thread's own model (a workspace's reflection: its policy's default model, else `SERVICE_DEFAULT_MODEL`)"),
  curatorFallbackModel: operator("SERVICE_CURATOR_FALLBACK_MODEL", optional, null, "The model asked when the curator model fails"),
  curatorTimeoutMs: operator("SERVICE_CURATOR_TIMEOUT_MS", positive, "60000", "How long one curator model may take to write a summary before it counts as failed (an engine's own compaction gets twice as long)"),
  uiModel: operator("SERVICE_UI_MODEL", optional, null, "The model that writes a thread's generated interface (`POST /threads/:id/ui/generate`, through pi-ai, on the accounts of its provider, within `SERVICE_CURATOR_TIMEOUT_MS`); unset: the interface is built by the template from the thread's state (docs/ui.md)"),
  memoryReflectEvery: operator("SERVICE_MEMORY_REFLECT_EVERY", whole, "50", "A workspace reflects on its memory by itself once this many memories (reflections aside) were retained since its last reflection; 0: only on request (docs/memory.md)"),
  prOverlap: operator("SERVICE_PR_OVERLAP", on, "off", "`on`: `POST /github/overlap` acts on the duplicates it finds (a comment on the newer pull request naming the older, and the `possible-duplicate` label, once a pair); otherwise it is a dry run (docs/code-host.md)"),
  onBusy: operator("SERVICE_ON_BUSY", onBusy, "queue", "What a message does when it arrives while a turn runs, for threads whose spawn and workspace policy name nothing: `queue`, `steer`, `interrupt`, `reject`"),
  faults: operator("SERVICE_FAULTS", names, null, "Fault drills: `blob-put` makes every large-body save fail (how the degraded-thread test breaks storage); `wake-deliver` keeps every wake in its watched thread's outbox (how the subscription test stops a host between a match and its delivery); `memory-retain` makes every retain's write fail (how the memory alert test breaks the memory store)"),
  build: front("BUILD", "The build id `/health` and every 404 report (the front sets it from SERVICE_BUILD or git).", text, "dev"),
  internalToken: front("SERVICE_INTERNAL_TOKEN", "Shared with the front: internal routes (the boot sweep) and the shard peer require it. Empty disables them.", text),
  workspaces: front("SERVICE_WORKSPACES", "workspaces.json as the front read and checked it.", (raw) =>
    raw ? new Map(WorkspacesFile.parse(JSON.parse(raw)).workspaces.map((w): [string, WorkspaceConfig] => [w.name, w])) : null,
  ),
  codeFence: front("SERVICE_CODE_FENCE", "The registered code roots' real paths, as the front read `SERVICE_CODE_ROOTS` and the workspaces' `repos`: build threads are fenced out of them.", (raw) => (raw ? (JSON.parse(raw) as string[]) : [])),
  runtimeFence: front(
    "SERVICE_RUNTIME_FENCE",
    "`{private, runtime}`: the data directory and engine state, and what the front runs (its checkout, node_modules, Node's prefix), by real paths and as given: no session works inside the first or in a directory holding the second.",
    (raw): { private: string[]; runtime: string[] } => (raw ? (JSON.parse(raw) as { private: string[]; runtime: string[] }) : { private: [], runtime: [] }),
  ),
  accounts: front("SERVICE_ACCOUNTS", "The account pool's ids and providers, as the front read them (`PublicAccount[]`).", (raw) =>
    new Map(((raw ? JSON.parse(raw) : []) as PublicAccount[]).map((a): [string, PublicAccount] => [a.id, a])),
  ),
  bootId: raw("SERVICE_BOOT_ID", "This boot of the front: a drain armed by an earlier boot does not count."),
  enginesToken: raw("SERVICE_ENGINES_TOKEN", "What the engine host wants from its callers, new at each boot."),
  codeToken: raw("SERVICE_CODE_TOKEN", "What the code service wants from its callers, new at each boot."),
  accountsToken: raw("SERVICE_ACCOUNTS_TOKEN", "What the account pool wants from its callers, new at each boot."),
  shard: raw("SERVICE_SHARD", "This workerd process's shard (`0` is home); absent on Cloudflare, where one namespace spans every machine."),
  shardCount: raw("SERVICE_SHARD_COUNT", "The workerd processes of the host (docs/decisions.md, \"Two workerd processes\")."),
  shardSince: raw("SERVICE_SHARD_SINCE", "When the host went to its shard layout: threads created before stay home."),
};

type Settings = typeof SETTINGS;
type Parsed = { [K in keyof Settings as Settings[K]["read"] extends null ? never : K]: Settings[K]["read"] extends Parser<infer T> ? T : never };

/** The worker's variables as wrangler and the front give them: text, or unset. */
export type ConfigVars = { [K in keyof Settings as Settings[K]["name"]]?: string };

/** The worker's settings, read. */
export type RuntimeConfig = Parsed & {
  /** Which `Host` names and browser origins may call (SERVICE_ALLOWED_HOSTS, SERVICE_ALLOWED_ORIGINS). */
  callers: CallerPolicy;
};

/**
 * What a summary or a reflection asks, in order: the curator model (unset: `own`, the
 * model of the thread or workspace asking, so a default configuration still writes
 * summaries), then its fallback.
 */
export function curatorModels(c: RuntimeConfig, own: string): string[] {
  return [...new Set([c.curatorModel ?? own, c.curatorFallbackModel].filter((m): m is string => m !== null))];
}

export function readConfig(vars: ConfigVars): RuntimeConfig {
  const values = vars as Record<string, string | undefined>;
  const config: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [string, Setting<string, unknown> | Raw<string>][]) if (s.read) config[key] = s.read(values[s.name], s.default);
  config.callers = readCallerPolicy(vars.SERVICE_ALLOWED_HOSTS, vars.SERVICE_ALLOWED_ORIGINS);
  return config as RuntimeConfig;
}
