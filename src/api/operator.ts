/** SPEC "Operating the host": what the operator routes answer, and what the front reports. */
import { z } from "zod";
import type { Json } from "./engine.js";

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

/** `GET /keeper/spawn-pause`. */
export interface SpawnPause {
  paused: boolean;
  since: string | null;
  reason: string | null;
  /** The last operator clear, while it holds (until free space recovers over the resume threshold). */
  cleared: { at: string; reason: string } | null;
  freeBytes: number | null;
  totalBytes: number | null;
  checkedAt: string | null;
  pauseBelowBytes: number | null;
  resumeAboveBytes: number | null;
  retryAfterS: number | null;
}

export const ClearSpawnPause = z.object({ reason: z.string().trim().min(1, "reason is required").max(500) }).strict();

/** Per-route request timings since the worker started (`GET /timings`). */
export interface RouteTiming {
  route: string;
  count: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** `GET /metrics/estate`: the host's threads as the catalog counts them (live ones in the breakdowns). */
export interface Estate {
  live: number;
  archived: number;
  byType: Record<string, number>;
  byRole: Record<string, number>;
  byStage: Record<string, number>;
  byWorkspace: Record<string, number>;
  cost: { usd: number; inputTokens: number; outputTokens: number };
}

export const ATTENTION_KINDS = ["approval", "question", "degraded", "spawn-pause", "accounts-exhausted", "storage-full"] as const;

/**
 * Whether the data volume takes writes (`GET /health` `storage`): `full` from the first
 * write it refused for want of space until a write succeeds again; `unknown` when the
 * Host did not answer. `refusals` counts the writes refused since `since`.
 */
export type StorageState =
  | { state: "ok" }
  | { state: "full"; since: string; lastAt: string; reason: string; refusals: number; threadIds: string[] }
  | { state: "unknown" };

/** Something that needs a person (`GET /attention`); `id` is stable while the item is open. */
export interface AttentionItem {
  id: string;
  kind: (typeof ATTENTION_KINDS)[number];
  /** One line for a person. */
  title: string;
  threadId: string | null;
  workspace: string | null;
  /** When it began, as far as the host knows. */
  since: string | null;
  /** Where to act on it. */
  action: string;
  detail: { [key: string]: Json };
}

/** One entry of `/attention/changes` and `/attention/follow`. */
export interface AttentionChange {
  seq: number;
  at: string;
  change: "opened" | "updated" | "closed";
  id: string;
  /** The item as it is now; for `closed`, as it was last seen. */
  item: AttentionItem;
}

/** `POST /peers/external`: a peer that records threads here without an engine on this host. */
export const ExternalPeerBody = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "letters, digits, '.', '_' or '-', at most 64"),
    url: z.string().url().optional(),
    description: z.string().max(500).optional(),
  })
  .strict();

export interface ExternalPeer {
  name: string;
  url: string | null;
  description: string | null;
  registeredAt: string;
}

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

export interface Preview {
  id: string;
  threadId: string;
  port: number;
  command: string;
  title: string | null;
  url: string;
  createdAt: string;
  /** `up` when the port answered HTTP just now, `down` when it did not. */
  status: "up" | "down";
  checkedAt: string;
}
