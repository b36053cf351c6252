import { DurableObject } from "cloudflare:workers";
import type { PendingApproval, PendingQuestion } from "../src/api/turns.js";
import type { Env } from "../src/env.js";

/**
 * One workspace: the single writer of its head slot and of the policy its owner set,
 * and the index of what its threads wait on (approvals and questions). Each thread stays
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
      CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
  }

  // ---- the head slot: decided here, atomically ----

  /**
   * Takes the head slot for `threadId`. `holder` names another thread that has it (and
   * nothing changed); `taken` says this call took it, so only that caller gives it back
   * if what it was for fails.
   */
  claimHead(threadId: string): { holder: string | null; taken: boolean } {
    const holder = this.setting("head");
    if (holder === threadId) return { holder: null, taken: false };
    if (holder) return { holder, taken: false };
    this.put("head", threadId);
    return { holder: null, taken: true };
  }

  /** Frees the slot if `threadId` holds it. */
  releaseHead(threadId: string): void {
    if (this.setting("head") === threadId) this.sql.exec("DELETE FROM settings WHERE key = 'head'");
  }

  head(): string | null {
    return this.setting("head");
  }

  // ---- policy ----

  /** The owner's policy as JSON text, or null while the configured one is in force. */
  policy(): string | null {
    return this.setting("policy");
  }

  /** Replaces the policy (already validated by the router). */
  setPolicy(json: string): void {
    this.put("policy", json);
  }

  // ---- what threads wait on ----

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

  private setting(key: string): string | null {
    return this.sql.exec<{ value: string }>("SELECT value FROM settings WHERE key = ?", key).toArray()[0]?.value ?? null;
  }

  private put(key: string, value: string): void {
    this.sql.exec("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", key, value);
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
