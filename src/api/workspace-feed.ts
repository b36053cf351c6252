/** What a workspace's feed holds (`GET /workspaces/:name/events`, `/changes`, `/tail`). */
import type { ApprovalDecision, QuestionAction } from "./engine.js";
import type { ForwardPage, ReversePage } from "./tail.js";
import type { ThreadSummary } from "./threads.js";
import type { PendingApproval, PendingQuestion } from "./turns.js";
import type { Policy } from "./workspaces.js";

/** The body of each kind; the entry's `threadId` sits beside it, not in it. */
export interface FeedBodies {
  "thread-spawned": Pick<ThreadSummary, "role" | "title" | "engine" | "model" | "parent">;
  "thread-archived": { reason: string | null };
  "thread-restored": Record<string, never>;
  /** The summary the catalog got, recorded only when it differs from the last one recorded. */
  "thread-changed": { summary: ThreadSummary };
  /** `threadId` is the thread that took or gave up the slot. */
  "head-changed": { head: string | null };
  "policy-changed": { policy: Policy };
  /** `threadSeq`: the thread's event that asked (its `seq` there; `seq` here is the feed's). */
  "approval-opened": Omit<PendingApproval, "threadId" | "seq"> & { threadSeq: number };
  "approval-resolved": { approvalId: string; decision: ApprovalDecision | "cancelled" };
  "question-opened": Omit<PendingQuestion, "threadId" | "seq"> & { threadSeq: number };
  "question-resolved": { requestId: string; action: QuestionAction | "cancelled" };
}

export type FeedKind = keyof FeedBodies;

/**
 * One entry as readers get it: the body's fields beside the envelope. `seq` ascends by
 * exactly 1 per workspace and is the SSE id and the tail cursor.
 */
export type FeedEntry = {
  [K in FeedKind]: { seq: number; ts: string; kind: K; threadId: string | null } & FeedBodies[K];
}[FeedKind];

/** The kinds `/changes` carries: changes to threads. */
export const CHANGE_KINDS: readonly FeedKind[] = ["thread-spawned", "thread-changed", "thread-archived", "thread-restored"];

/** How many threads one `/changes?threads=` may name. */
export const MAX_WATCHED_THREADS = 100;

export type FeedForwardPage = ForwardPage<FeedEntry>;
export type FeedReversePage = ReversePage<FeedEntry>;
