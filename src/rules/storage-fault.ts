import { CODES } from "../api/errors.js";
import { refuse, type Refusal } from "../api/outcome.js";

/** How long a refused writer is told to wait: freeing space is a person's (or a sweep's) work, not a moment's. */
export const STORAGE_RETRY_AFTER_S = 30;

/**
 * The texts a full volume shows as: SQLite's (the objects, R2's index), the kernel's
 * (workerd's files, the front's), and this runtime's own (a refusal's, the Host's).
 */
const FULL = /SQLITE_FULL|database or disk is full|\bENOSPC\b|no space left on device|\bEDQUOT\b|disk quota exceeded|the data volume is full/i;

/**
 * SQLite's I/O error. On a write it is how a volume that filled between SQLite's checks
 * and its `write()` shows; on a read it is a broken disk, which no waiting mends.
 */
const IO_ERROR = /SQLITE_IOERR|disk I\/O error/i;

/**
 * workerd's own storage operations (creating an object's database, its alarm and key-value
 * tables) report a failed SQLite write in their log only, and give the code this opaque text.
 */
const OPAQUE = /^internal error; reference = \w+/;

/**
 * Free space under which a volume is taken as full when a write fails with workerd's
 * opaque error: SQLite grows a database by pages and its write-ahead log by frames, and
 * a new object's database takes a few of each, so a volume this close to full refuses
 * them while smaller writes still fit.
 */
export const NEARLY_FULL_BYTES = 8 * 1024 * 1024;

/** Whether a volume measured now has too little room for SQLite's writes (see `NEARLY_FULL_BYTES`). */
export function nearlyFull(volume: { freeBytes: number } | null): boolean {
  return volume !== null && volume.freeBytes < NEARLY_FULL_BYTES;
}

/** How deep a cause chain is followed: wrappers (the blob store's, RPC's) add a level or two. */
const CAUSE_DEPTH = 5;

/** Whether an error is workerd's opaque one, which says nothing of its cause (see `storageFault`'s `volumeFull`). */
export function hidesItsCause(err: unknown): boolean {
  return OPAQUE.test(typeof (err as Error)?.message === "string" ? (err as Error).message : "");
}

/**
 * Whether an error is the storage refusing for want of space, and if so its text (the
 * reason an operator reads); null for every other error. `writing`: the error came from
 * a write, where an I/O error is taken as a full volume too. `volumeFull`: the Host holds
 * a storage fault open, or the volume measured now is nearly full, so a write's opaque
 * workerd error is taken as the full volume (it is what workerd makes of SQLITE_FULL in
 * its own storage operations); otherwise it stays a bug. Every place that can meet a full disk asks this one rule,
 * so they all recognize the same faults.
 */
export function storageFault(err: unknown, writing: boolean, volumeFull = false): string | null {
  let at: unknown = err;
  for (let depth = 0; depth < CAUSE_DEPTH && at !== null && at !== undefined; depth++) {
    const message = typeof at === "string" ? at : typeof (at as Error).message === "string" ? (at as Error).message : "";
    const code = typeof (at as { code?: unknown }).code === "string" ? (at as { code: string }).code : "";
    const text = `${code} ${message}`;
    if (FULL.test(text) || (writing && (IO_ERROR.test(text) || (volumeFull && OPAQUE.test(message))))) return message || code;
    at = typeof at === "object" ? (at as { cause?: unknown }).cause : undefined;
  }
  return null;
}

/** A write the full volume refused: nothing of it was kept, and it may be sent again once space returns. */
export function storageFullRefusal(reason: string): Refusal {
  return refuse(
    507,
    `the data volume is full: nothing of this write was kept; send it again once space is freed (${reason})`,
    CODES.storageFull,
    { reason },
    { "retry-after": String(STORAGE_RETRY_AFTER_S) },
  );
}

/** Whether an HTTP method changes state: only such a request can say that writing works again. */
export function isWriteMethod(method: string): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE";
}

/**
 * Routes that take a POST but write nothing to the data volume (a search, a recall, the
 * overlap pass, whose writes go to the code host, an access token).
 */
const READS_BY_POST = /^\/(code\/search|github\/overlap|accounts\/[^/]+\/access-token|workspaces\/[^/]+\/memory\/recall)$/;

/** Whether a request's success shows the volume took a write again: a read's success says nothing of the disk. */
export function wroteToTheVolume(method: string, path: string): boolean {
  return isWriteMethod(method) && !READS_BY_POST.test(path);
}
