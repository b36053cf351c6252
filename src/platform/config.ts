import type { PublicAccount } from "../api/accounts.js";
import { WorkspacesFile, type WorkspaceConfig } from "../api/workspaces.js";
import { readCallerPolicy, type CallerPolicy } from "../rules/caller-policy.js";

/** Limits and settings from the worker's vars (wrangler.toml [vars]; the front may override them). */
export interface RuntimeConfig {
  build: string;
  blobThreshold: number;
  maxBody: number;
  heartbeatMs: number;
  streamSubscribers: number;
  streamBuffer: number;
  defaultModel: string;
  catalogSyncMs: number;
  /** Shared with the front: internal routes (the boot sweep) require it. Empty disables them. */
  internalToken: string;
  /** Faults to inject, for drills and tests: `blob-put` makes every large-body save fail. */
  faults: Set<string>;
  /** How long an interrupt waits for the engine to end the turn before the thread ends it. */
  interruptGraceMs: number;
  /** The operator's workspaces by name; null when none are configured (names are then free labels). */
  workspaces: Map<string, WorkspaceConfig> | null;
  /** The host's provider accounts (ids and providers only); empty when none are configured and the simulator stands in. */
  accounts: Map<string, PublicAccount>;
  /** The workspace completions calls without `x-service-workspace` are charged to, if any. */
  completionsDefaultWorkspace: string | null;
  /** Live sessions (turns running or waiting on a person) the host allows before refusing spawns. */
  sessionCap: number;
  /** How long a session must have waited on a person before it may be evicted for a new one. */
  sessionIdleMs: number;
  /** First pages of `GET /threads` one client may ask for per minute. */
  threadListBudget: number;
  /** Which `Host` names and browser origins may call (SERVICE_ALLOWED_HOSTS, SERVICE_ALLOWED_ORIGINS). */
  callers: CallerPolicy;
}

export interface ConfigVars {
  BUILD?: string;
  SERVICE_AGENTS_BLOB_THRESHOLD?: string;
  SERVICE_AGENTS_MAX_BODY?: string;
  SERVICE_SSE_HEARTBEAT_MS?: string;
  SERVICE_STREAM_SUBSCRIBERS?: string;
  SERVICE_STREAM_BUFFER?: string;
  SERVICE_DEFAULT_MODEL?: string;
  SERVICE_CATALOG_SYNC_MS?: string;
  SERVICE_BOOT_ID?: string;
  SERVICE_INTERNAL_TOKEN?: string;
  SERVICE_ENGINES_TOKEN?: string;
  SERVICE_FAULTS?: string;
  SERVICE_INTERRUPT_GRACE_MS?: string;
  /** workspaces.json as the front read and checked it. */
  SERVICE_WORKSPACES?: string;
  /** The account pool's ids and providers, as the front read them (`PublicAccount[]`). */
  SERVICE_ACCOUNTS?: string;
  SERVICE_ACCOUNTS_TOKEN?: string;
  SERVICE_COMPLETIONS_DEFAULT_WORKSPACE?: string;
  SERVICE_SESSION_CAP?: string;
  SERVICE_SESSION_IDLE_MS?: string;
  SERVICE_THREAD_LIST_BUDGET?: string;
  /** The review hub, whose `/limits` names the build seat limit. */
  SERVICE_HUB_URL?: string;
  /** Host names beyond loopback that name this runtime (comma-separated `name` or `name:port`). */
  SERVICE_ALLOWED_HOSTS?: string;
  /** Browser origins beyond the runtime's own and the application server's (comma-separated). */
  SERVICE_ALLOWED_ORIGINS?: string;
}

function positive(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
}

export function readConfig(vars: ConfigVars): RuntimeConfig {
  return {
    build: vars.BUILD || "dev",
    blobThreshold: positive(vars.SERVICE_AGENTS_BLOB_THRESHOLD, 65536),
    maxBody: positive(vars.SERVICE_AGENTS_MAX_BODY, 8 * 1024 * 1024),
    heartbeatMs: positive(vars.SERVICE_SSE_HEARTBEAT_MS, 15_000),
    streamSubscribers: positive(vars.SERVICE_STREAM_SUBSCRIBERS, 64),
    streamBuffer: positive(vars.SERVICE_STREAM_BUFFER, 256),
    defaultModel: vars.SERVICE_DEFAULT_MODEL || "sim-1",
    catalogSyncMs: positive(vars.SERVICE_CATALOG_SYNC_MS, 1000),
    internalToken: vars.SERVICE_INTERNAL_TOKEN ?? "",
    faults: new Set((vars.SERVICE_FAULTS ?? "").split(",").map((f) => f.trim()).filter(Boolean)),
    interruptGraceMs: positive(vars.SERVICE_INTERRUPT_GRACE_MS, 5000),
    workspaces: vars.SERVICE_WORKSPACES
      ? new Map(WorkspacesFile.parse(JSON.parse(vars.SERVICE_WORKSPACES)).workspaces.map((w) => [w.name, w]))
      : null,
    accounts: new Map(((vars.SERVICE_ACCOUNTS ? JSON.parse(vars.SERVICE_ACCOUNTS) : []) as PublicAccount[]).map((a) => [a.id, a])),
    completionsDefaultWorkspace: vars.SERVICE_COMPLETIONS_DEFAULT_WORKSPACE || null,
    sessionCap: positive(vars.SERVICE_SESSION_CAP, 16),
    sessionIdleMs: positive(vars.SERVICE_SESSION_IDLE_MS, 30 * 60_000),
    threadListBudget: positive(vars.SERVICE_THREAD_LIST_BUDGET, 120),
    callers: readCallerPolicy(vars.SERVICE_ALLOWED_HOSTS, vars.SERVICE_ALLOWED_ORIGINS),
  };
}
