import { createMiddleware } from "hono/factory";
import { DRAIN_RETRY_AFTER_SECONDS, type DrainStatus } from "../api/drain.js";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "./app-env.js";
import type { Env } from "../platform/env.js";
import { hostOf } from "../platform/stubs.js";
import { orNull, PEER_PATIENCE_MS, shardPeer } from "../platform/peer.js";
import { refused } from "./answer.js";

/**
 * How long this isolate trusts what it knows of the drain before asking the Host object
 * again. Locally the router is one isolate and the drain routes update this cache as
 * they answer, so the re-check only matters on Cloudflare, where another isolate may
 * have armed or disarmed it (docs/decisions.md, "The drain").
 */
const RECHECK_MS = 1000;

let known: { armed: boolean; at: number } | null = null;
/** Bumped by every update, so a re-check that started before one cannot overwrite it. */
let generation = 0;

/** What the Host object just answered about the drain. */
export function noteDrain(status: DrainStatus): void {
  generation++;
  known = { armed: status.armed, at: Date.now() };
}

/**
 * What the drain routes just learnt, noted here and passed to the other workerd process
 * of the local host before they answer, so that neither takes new work once the drain
 * is armed. Should the peer not answer, its own re-check catches up within RECHECK_MS.
 */
export async function settleDrain(env: Env, status: DrainStatus): Promise<void> {
  noteDrain(status);
  const shard = shardPeer(env);
  if (!shard) return;
  await orNull(shard.peer.noteDrain(shard.token, status), PEER_PATIENCE_MS, "drain: telling the other router");
}

/** A re-read of the Host object is under way (a flag, never a shared promise). */
let refreshing = false;

async function refresh(env: Env): Promise<DrainStatus> {
  const started = generation;
  const status = await hostOf(env).drainStatus();
  if (generation === started) noteDrain(status);
  return status;
}

/**
 * Whether the drain is armed, from this isolate's memory. Memory older than RECHECK_MS is
 * still answered, while one re-read of the Host object runs in the background: requests
 * on the append path never wait for it. Only a cold isolate, which knows nothing yet,
 * asks and waits, each request for itself: a promise begun by one request must not be
 * awaited by another (workerd cancels such a request as hung once the first one ends).
 */
async function armed(env: Env, waitUntil: (p: Promise<unknown>) => void): Promise<boolean> {
  if (!known) return (await refresh(env)).armed;
  if (Date.now() - known.at >= RECHECK_MS && !refreshing) {
    refreshing = true;
    waitUntil(
      refresh(env)
        .catch((err: unknown) => console.error(`drain re-check: ${(err as Error).message}`))
        .finally(() => (refreshing = false)),
    );
  }
  return known.armed;
}

/** Refuses with 503 `draining` while the drain is armed, naming the threads still mid-turn. */
export async function refuseWhileDraining(env: Env, waitUntil: (p: Promise<unknown>) => void): Promise<void> {
  if (!(await armed(env, waitUntil))) return;
  // Armed: the refusal names the threads mid-turn, which only the Host object knows now.
  const status = await refresh(env);
  if (!status.armed) return;
  refused(
    503,
    "the host is draining: it takes no new work until the drain is disarmed",
    CODES.draining,
    { active: status.active, activeThreads: status.activeThreads, owner: status.owner, since: status.since, reason: status.reason },
    { "retry-after": String(DRAIN_RETRY_AFTER_SECONDS) },
  );
}

/** For the routes that start new work (spawns, messages, forks, loops): refused while the host drains. */
export const notWhileDraining = Object.assign(
  createMiddleware<AppEnv>(async (c, next) => {
    await refuseWhileDraining(c.env, (p) => c.executionCtx.waitUntil(p));
    await next();
  }),
  /** Read off the router by test/unit/contract.test.ts: the routes src/api/contract.ts marks `drains`. */
  { drains: true as const },
);
