import type { ApprovalDecision, QuestionAction } from "../../src/api/engine.js";
import type { PendingApproval, PendingQuestion } from "../../src/api/turns.js";
import type { FeedBodies, FeedKind } from "../../src/api/workspace-feed.js";

export const PENDING_SCHEMA = `
  CREATE TABLE IF NOT EXISTS pending (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY (kind, id)
  );
  CREATE TABLE IF NOT EXISTS closed_early (kind TEXT NOT NULL, id TEXT NOT NULL, outcome TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (kind, id));
`;

/** How long the outcome of a wait that closed before it was heard opening is kept. */
const CLOSED_EARLY_MS = 3_600_000;

/** Writes one feed entry; call only inside a commit. */
export type FeedRecord = <K extends FeedKind>(kind: K, threadId: string | null, body: FeedBodies[K]) => void;

/**
 * The index of what the workspace's threads wait on (approvals and questions), and the
 * feed entries that say so. Each thread stays the single writer of its own approvals:
 * this index is told after the thread decided. Every method but the lists runs inside
 * the Workspace's commit.
 */
export class PendingIndex {
  constructor(
    private readonly sql: SqlStorage,
    private readonly record: FeedRecord,
  ) {}

  approvalOpened(item: PendingApproval): void {
    const { threadId, seq, ...body } = item;
    this.record("approval-opened", threadId, { ...body, threadSeq: seq });
    const early = this.closedEarly("approval", item.approvalId);
    if (early) this.record("approval-resolved", threadId, { approvalId: item.approvalId, decision: early as ApprovalDecision | "cancelled" });
    else this.open("approval", item.approvalId, threadId, item);
  }

  questionOpened(item: PendingQuestion): void {
    const { threadId, seq, ...body } = item;
    this.record("question-opened", threadId, { ...body, threadSeq: seq });
    const early = this.closedEarly("question", item.requestId);
    if (early) this.record("question-resolved", threadId, { requestId: item.requestId, action: early as QuestionAction | "cancelled" });
    else this.open("question", item.requestId, threadId, item);
  }

  /** A wait closed with `outcome` (a decision, or a question's action); told twice, it is recorded once. */
  closed(kind: "approval" | "question", id: string, outcome: ApprovalDecision | QuestionAction | "cancelled"): void {
    const open = this.sql.exec<{ thread_id: string }>("DELETE FROM pending WHERE kind = ? AND id = ? RETURNING thread_id", kind, id).toArray()[0];
    if (!open) {
      // The thread's "opened" may still be on its way: remember the outcome for it (an hour at most).
      const now = Date.now();
      this.sql.exec("INSERT OR IGNORE INTO closed_early (kind, id, outcome, at) VALUES (?, ?, ?, ?)", kind, id, outcome, now);
      this.sql.exec("DELETE FROM closed_early WHERE at < ?", now - CLOSED_EARLY_MS);
      return;
    }
    if (kind === "approval") this.record("approval-resolved", open.thread_id, { approvalId: id, decision: outcome as ApprovalDecision | "cancelled" });
    else this.record("question-resolved", open.thread_id, { requestId: id, action: outcome as QuestionAction | "cancelled" });
  }

  /** Items are stored as JSON and answered as JSON: tool inputs are any JSON, which RPC types cannot express. */
  list(kind: "approval" | "question"): string {
    const items = this.sql.exec<{ item: string }>("SELECT item FROM pending WHERE kind = ? ORDER BY rowid", kind).toArray();
    return `[${items.map((r) => r.item).join(",")}]`;
  }

  /** The outcome of a wait that closed before this object heard it open, consumed. */
  private closedEarly(kind: string, id: string): string | null {
    return this.sql.exec<{ outcome: string }>("DELETE FROM closed_early WHERE kind = ? AND id = ? RETURNING outcome", kind, id).toArray()[0]?.outcome ?? null;
  }

  private open(kind: string, id: string, threadId: string, item: unknown): void {
    this.sql.exec("INSERT OR REPLACE INTO pending (kind, id, thread_id, item) VALUES (?, ?, ?, ?)", kind, id, threadId, JSON.stringify(item));
  }
}
