import type { Context, MiddlewareHandler } from "hono";
import { CODES } from "../api/errors.js";
import type { StorageState } from "../api/operator.js";
import { hostOf } from "../platform/stubs.js";
import { wroteToTheVolume } from "../rules/storage-fault.js";
import type { AppEnv } from "./app-env.js";

/**
 * Whether this isolate has seen the volume full (it refused a write, or it read the Host's
 * fault): then the next write that succeeds tells the Host at once.
 */
let seenFull = false;

/**
 * A fault the other workerd process saw: this one's writes tell the Host they succeed at
 * most this often, one RPC (which writes nothing while no fault is open) per interval.
 */
const TELL_EVERY_MS = 5000;
let toldAt = 0;

/**
 * The front's own bookkeeping (host reports, boot sweeps) writes to the Host alone, whose
 * small writes may fit where a thread's do not: no sign either way. A runtime tool call
 * (`/internal/tools`) is a thread's write like any other.
 */
const BOOKKEEPING = /^\/internal\/(host-report|boot-sweep)$/;

const THREAD_IN_PATH = /^\/threads\/([^/]+)/;

/** A reader of the Host's storage state notes a fault it sees, so this isolate's next good write closes it. */
export function noteStorageState(state: StorageState): void {
  if (state.state === "full") seenFull = true;
}

function later(c: Context<AppEnv>, work: Promise<unknown>): void {
  const done = work.catch((err: unknown) => console.error(`storage watch: the Host did not answer: ${(err as Error).message}`));
  try {
    c.executionCtx.waitUntil(done);
  } catch {
    // No execution context (a test calling the app directly): the promise runs on its own.
  }
}

/**
 * Tells the Host of writes the full volume refused (every `507 storage-full`, whichever
 * object refused it or however it surfaced: see `app.onError`), and of the first write
 * that succeeds afterwards, which closes the fault. The Host keeps the state `/health`,
 * `/attention` and `/incidents` show.
 */
export const storageWatch: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const at = Date.now();
  const path = new URL(c.req.url).pathname;
  if (BOOKKEEPING.test(path)) return;
  const status = c.res.status;
  if (status === 507) {
    const body = (await c.res
      .clone()
      .json()
      .catch(() => null)) as { code?: string; reason?: string } | null;
    if (body?.code !== CODES.storageFull) return;
    seenFull = true;
    later(c, hostOf(c.env).storageRefused(body.reason ?? "the data volume is full", THREAD_IN_PATH.exec(path)?.[1] ?? null, at));
  } else if (status >= 200 && status < 300 && wroteToTheVolume(c.req.method, path) && (seenFull || Date.now() - toldAt >= TELL_EVERY_MS)) {
    seenFull = false;
    toldAt = Date.now();
    later(
      c,
      hostOf(c.env)
        .storageWritten(at)
        .catch((err: unknown) => {
          seenFull = true;
          throw err;
        }),
    );
  }
};
