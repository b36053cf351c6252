import { DurableObject } from "cloudflare:workers";
import type { PendingApproval, PendingQuestion } from "../src/api/turns.js";
import type { Env } from "../src/env.js";

/**
 * One workspace. Today it keeps the index of what its threads wait on (approvals and
 * questions), so a person can find every stopped thread in one read. Each thread stays
 * the single writer of its own approvals: this index is told after the thread decided,
 * and a stale entry is answered by the thread with `approval-closed`.
 */
export class Workspace extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS pending (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (kind, id)
      );
    `);
  }

  approvalOpened(item: PendingApproval): void {
    this.open("approval", item.approvalId, item.threadId, item);
  }

  questionOpened(item: PendingQuestion): void {
    this.open("question", item.requestId, item.threadId, item);
  }

  closed(kind: "approval" | "question", id: string): void {
    this.sql.exec("DELETE FROM pending WHERE kind = ? AND id = ?", kind, id);
  }

  /** JSON text of the pending approvals (`PendingApproval[]`), oldest first. */
  approvals(): string {
    return this.list("approval");
  }

  /** JSON text of the open questions (`PendingQuestion[]`), oldest first. */
  questions(): string {
    return this.list("question");
  }

  private open(kind: string, id: string, threadId: string, item: unknown): void {
    this.sql.exec("INSERT OR REPLACE INTO pending (kind, id, thread_id, item) VALUES (?, ?, ?, ?)", kind, id, threadId, JSON.stringify(item));
  }

  /** Items are stored as JSON and answered as JSON: tool inputs are any JSON, which RPC types cannot express. */
  private list(kind: string): string {
    const items = this.sql.exec<{ item: string }>("SELECT item FROM pending WHERE kind = ? ORDER BY rowid", kind).toArray();
    return `[${items.map((r) => r.item).join(",")}]`;
  }
}
