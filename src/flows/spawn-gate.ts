import { CODES } from "../api/errors.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { catalogOf, hostOf, threadOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";

/** What a refused caller is told to wait when no idle session is coming due. */
const SESSION_CAP_RETRY_S = 30;

/**
 * The host-wide gate in front of every new thread (spawns and forks): spawns pause while
 * the data volume is low (503 `spawns-paused`), and stop at the live-session cap (429
 * `session-cap`) unless a session has waited on a person longer than
 * `sessionIdleMs`: the longest-waiting one is evicted (its turn ends `closed`, its
 * engine process stops, its thread stays) to make room.
 */
export async function spawnGate(env: Env, config: RuntimeConfig): Promise<void> {
  const { pause, running } = await hostOf(env).spawnGate();
  if (pause.paused)
    refused(
      503,
      `spawns are paused: ${pause.reason}`,
      CODES.spawnsPaused,
      { since: pause.since, freeBytes: pause.freeBytes, resumeAboveBytes: pause.resumeAboveBytes },
      { "retry-after": String(pause.retryAfterS ?? SESSION_CAP_RETRY_S) },
    );
  if (running.length < config.sessionCap) return;
  const now = Date.now();
  const waiting = (await catalogOf(env).summaries(running))
    .filter((s) => s.stage === "waiting")
    .map((s) => ({ id: s.id, idleMs: now - Date.parse(s.updatedAt) }))
    .sort((a, b) => b.idleMs - a.idleMs);
  for (const candidate of waiting.filter((w) => w.idleMs >= config.sessionIdleMs)) {
    const why = `this session waited ${Math.round(candidate.idleMs / 1000)} s on a person and was evicted to make room under the live-session cap (${config.sessionCap}); the thread is intact, send a message to go on`;
    const evicted = (await threadOf(env, candidate.id).evict(why, config.sessionIdleMs)) as { ok: boolean };
    if (evicted.ok) return;
  }
  const nextDue = waiting.map((w) => config.sessionIdleMs - w.idleMs).filter((ms) => ms > 0);
  const retryAfterS = nextDue.length ? Math.ceil(Math.min(...nextDue) / 1000) : SESSION_CAP_RETRY_S;
  refused(
    429,
    `the host runs ${running.length} live sessions, its cap; none has been idle ${Math.round(config.sessionIdleMs / 1000)} s to be evicted`,
    CODES.sessionCap,
    { live: running.length, cap: config.sessionCap },
    { "retry-after": String(Math.max(1, retryAfterS)) },
  );
}
