import type { StorageState } from "../../src/api/operator.js";
import { hidesItsCause } from "../../src/rules/storage-fault.js";

type Open = Extract<StorageState, { state: "full" }>;

/** Threads named in the fault at most: beyond that the operator has the picture. */
const THREADS_KEPT = 50;

/**
 * Whether the data volume takes writes, as the router last saw it: open from the first
 * write refused for want of space, closed by the next write that succeeds.
 *
 * The fault is held in memory only, because the Host's own SQLite is on the full volume.
 * A commit the volume refuses resets the object that made it (workerd rebuilds it from
 * its storage), which would forget the fault; so while it is open the Host writes
 * nothing: it skips its bookkeeping (samples, attention changes, the incident prune),
 * holds in memory what the running index and the incident window are told, and refuses
 * an operator's writes. Once closed, the fault is written into the incident
 * window (`failures`, one row per thread it refused), now that the disk takes it.
 */
export class StorageWatch {
  private open: Open | null = null;

  constructor(
    /** Runs a write as one transaction, so a refused one leaves nothing half done. */
    private readonly transact: (write: () => void) => void,
    private readonly recordFailure: (threadId: string, message: string, at: number) => void,
  ) {}

  state(): StorageState {
    return this.open ?? { state: "ok" };
  }

  /** `at`: when the router answered the refusal (the notes of two answers may arrive out of order). */
  refused(reason: string, threadId: string | null, at: number): void {
    const when = new Date(at).toISOString();
    const open: Open = this.open ?? { state: "full", since: when, lastAt: when, reason, refusals: 0, threadIds: [] };
    // workerd's opaque text says less than the fault's first words: those stay.
    if (when >= open.lastAt && !hidesItsCause(new Error(reason))) {
      open.lastAt = when;
      open.reason = reason;
    }
    open.refusals++;
    if (threadId && !open.threadIds.includes(threadId) && open.threadIds.length < THREADS_KEPT) open.threadIds.push(threadId);
    this.open = open;
  }

  /** Whether the Host must write nothing now (see the class). */
  get full(): boolean {
    return this.open !== null;
  }

  /**
   * A write succeeded at `at`: the volume takes writes again, and the fault joins the
   * incident window. A success answered before the last refusal closes nothing.
   */
  written(at: number): void {
    const open = this.open;
    if (!open || at <= Date.parse(open.lastAt)) return;
    this.open = null;
    try {
      this.transact(() => {
        const at = Date.parse(open.lastAt);
        for (const id of open.threadIds.length > 0 ? open.threadIds : [""]) this.recordFailure(id, `${open.refusals} writes refused: ${open.reason}`, at);
      });
    } catch (err) {
      // Still full after all (the write that succeeded was a small one): the fault stays open.
      this.open = open;
      throw err;
    }
  }
}

/** What a Host write answers while the volume is full: the router's storage-full refusal, as any other write gets. */
export class HostStorageFull extends Error {
  constructor(reason: string) {
    super(`the data volume is full: the Host writes nothing until a write succeeds again (${reason})`);
  }
}
