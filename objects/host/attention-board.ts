import type { AttentionChange, AttentionItem } from "../../src/api/operator.js";

export const ATTENTION_SCHEMA = `
  CREATE TABLE IF NOT EXISTS attention_open (id TEXT PRIMARY KEY, item TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS attention_log (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, change TEXT NOT NULL, id TEXT NOT NULL, item TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS attention_looked (one INTEGER PRIMARY KEY CHECK (one = 1), at INTEGER NOT NULL);
`;

/** Changes kept for readers that resume; older cursors start from the oldest kept. */
const LOG_KEPT = 10_000;

/**
 * The attention board inside the Host object: the items last seen open, and a log of
 * what opened, changed and closed between two looks. Items are gathered from their owners
 * (workspaces, the catalog, the keeper, the account pool) by the router; this object is
 * the one writer of the log, so every reader sees the same sequence.
 */
export class AttentionBoard {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(ATTENTION_SCHEMA);
  }

  /**
   * Records the difference between the items open now and the last look; answers the
   * newest seq. `lookedAt` is when the look began: a look older than one already applied
   * (two looks gathering at once) is dropped, so it cannot reopen what a newer one closed.
   * Items of `unknown` kinds (a source that did not answer) are left as they were.
   */
  refresh(items: AttentionItem[], lookedAt: number, unknown: string[]): number {
    const last = this.sql.exec<{ at: number }>("SELECT at FROM attention_looked WHERE one = 1").toArray()[0]?.at ?? 0;
    if (lookedAt < last) return this.lastSeq();
    this.sql.exec("INSERT OR REPLACE INTO attention_looked (one, at) VALUES (1, ?)", lookedAt);
    const before = new Map(
      this.sql
        .exec<{ id: string; item: string }>("SELECT id, item FROM attention_open")
        .toArray()
        .filter((r) => !unknown.includes((JSON.parse(r.item) as AttentionItem).kind))
        .map((r) => [r.id, r.item]),
    );
    const at = new Date().toISOString();
    for (const item of items) {
      const json = JSON.stringify(item);
      const was = before.get(item.id);
      before.delete(item.id);
      if (was === json) continue;
      this.sql.exec("INSERT OR REPLACE INTO attention_open (id, item) VALUES (?, ?)", item.id, json);
      this.append(at, was === undefined ? "opened" : "updated", item.id, json);
    }
    for (const [id, json] of before) {
      this.sql.exec("DELETE FROM attention_open WHERE id = ?", id);
      this.append(at, "closed", id, json);
    }
    return this.lastSeq();
  }

  changes(after: number, limit: number): AttentionChange[] {
    return this.sql
      .exec<{ seq: number; at: string; change: AttentionChange["change"]; id: string; item: string }>(
        "SELECT seq, at, change, id, item FROM attention_log WHERE seq > ? ORDER BY seq LIMIT ?",
        after,
        limit,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, at: r.at, change: r.change, id: r.id, item: JSON.parse(r.item) as AttentionItem }));
  }

  lastSeq(): number {
    return this.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM attention_log").one().seq ?? 0;
  }

  private append(at: string, change: AttentionChange["change"], id: string, item: string): void {
    const seq = this.lastSeq() + 1;
    this.sql.exec("INSERT INTO attention_log (seq, at, change, id, item) VALUES (?, ?, ?, ?, ?)", seq, at, change, id, item);
    this.sql.exec("DELETE FROM attention_log WHERE seq <= ?", seq - LOG_KEPT);
  }
}
