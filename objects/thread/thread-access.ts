import type { EventBodies, EventKind } from "../../src/api/events.js";
import { FINISHING_ROLES, type MessageAccepted } from "../../src/api/threads.js";
import type { RuntimeConfig } from "../../src/platform/config.js";
import type { Env } from "../../src/platform/env.js";
import type { CommitQueue } from "../lib/commit-queue.js";
import type { DeltaHub } from "./log/delta-hub.js";
import type { EventLog, PreparedEvent, SerializedEvent } from "./log/event-log.js";
import type { BlobStore } from "./log/blob-store.js";
import type { Outcome } from "../../src/api/outcome.js";
import type { ThreadState } from "./thread-state.js";
import type { TurnTables } from "./turn/tables.js";
import type { ThreadNews } from "../workspace/feed.js";

export type Accepted = SerializedEvent & { ts: string };

/**
 * What the turn code may use of its Thread. The Thread stays the single writer: the turn
 * code writes only through its commit queue and `append`, and sees nothing else of it.
 */
export interface ThreadAccess {
  readonly env: Env;
  readonly config: RuntimeConfig;
  /** The object's database, for the tables a part of it owns (handoffs); write only inside a commit. */
  readonly sql: SqlStorage;
  readonly log: EventLog;
  /** Attachments' bytes, by hash. */
  readonly blobs: BlobStore;
  readonly commits: CommitQueue;
  readonly tables: TurnTables;
  readonly deltas: DeltaHub;
  /** Null until the thread is created. Change it only inside a commit, then `saveState`. */
  state(): ThreadState | null;
  /** Writes one event; call only inside a CommitQueue write. */
  append(prepared: PreparedEvent): Accepted;
  prepareOrRefuse<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<PreparedEvent>>;
  saveState(): void;
  /**
   * A change to the thread's row, recorded as an event; `refusal` is asked before and again
   * inside the commit. The catalog learns of it at once, and the workspace's feed `news`.
   */
  change<K extends EventKind>(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState, event: Accepted) => void,
    news?: ThreadNews,
  ): Promise<Outcome<MessageAccepted>>;
  syncCatalogNow(): Promise<void>;
  /**
   * After a change that may bring a part's next due time closer (a wait opened, a retry
   * failed): the object's one alarm follows (objects/lib/alarm-schedule.ts). Parts never
   * set the alarm themselves.
   */
  reschedule(): Promise<void>;
  /** Resets the object: the next instance starts from what is on disk. */
  abort(reason: string): void;
}

/** The stage follows from the state: call inside a commit after any change to it. */
export function restage(thread: Pick<ThreadAccess, "state" | "tables" | "saveState">): void {
  const s = thread.state()!;
  s.stage = s.degraded
    ? "degraded"
    : s.turn
      ? thread.tables.openWaits(s.turn.id).length > 0
        ? "waiting"
        : "running"
      : s.leaseReleased && FINISHING_ROLES.includes(s.spec.role)
        ? "finished"
        : "idle";
  thread.saveState();
}
