import type { ThreadSummary } from "../../src/api/threads.js";
import type { FeedBodies, FeedKind } from "../../src/api/workspace-feed.js";
import type { Frame } from "../lib/sse.js";

/**
 * How many entries a workspace keeps. A feed is a notice board, not a record: the threads'
 * logs are the record. Older entries are dropped as new ones come, so a workspace that
 * lives for years stays the same size; a reader resuming from a dropped cursor starts at
 * the oldest entry kept.
 */
export const FEED_RETAIN = 50_000;

export const FEED_SCHEMA = `
  CREATE TABLE IF NOT EXISTS feed (
    seq       INTEGER PRIMARY KEY,
    ts        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    thread_id TEXT,
    body      TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS last_summary (
    thread_id TEXT PRIMARY KEY,
    last_seq  INTEGER NOT NULL,
    summary   TEXT NOT NULL
  );
`;

export type FeedRow = {
  seq: number;
  ts: string;
  kind: FeedKind;
  thread_id: string | null;
  body: string;
};

/** An entry as readers receive it, already serialized (`FeedEntry` as JSON). */
export interface FeedFrame extends Frame {
  kind: FeedKind;
  threadId: string | null;
}

export function toFrame(row: FeedRow): FeedFrame {
  // The body's fields sit beside the envelope's: splice, since `{}` has none to add.
  const rest = row.body === "{}" ? "}" : `,${row.body.slice(1)}`;
  const json = `{"seq":${row.seq},"ts":"${row.ts}","kind":"${row.kind}","threadId":${JSON.stringify(row.thread_id)}${rest}`;
  return { seq: row.seq, kind: row.kind, threadId: row.thread_id, json };
}

/**
 * A workspace's feed: what happened to its threads, its head slot, its policy and its
 * waits, in one order. Seqs start at 1 and have no gaps (taken from memory and written in
 * the same synchronous step); only the newest `FEED_RETAIN` entries are kept.
 *
 * Readers see entries up to `durableSeq` only, as with a thread's log: the owner marks a
 * batch durable when its commit is on disk, and publishes it in that same step.
 */
export class WorkspaceFeed {
  private last: number;
  private durable: number;

  constructor(private readonly sql: SqlStorage) {
    this.last = sql.exec<{ last: number | null }>("SELECT max(seq) AS last FROM feed").one().last ?? 0;
    this.durable = this.last;
  }

  get durableSeq(): number {
    return this.durable;
  }

  markDurable(): void {
    this.durable = this.last;
  }

  get lastSeq(): number {
    return this.last;
  }

  /** A write was undone: the entries it wrote are gone, and the next entry takes their seq. */
  rolledBack(): void {
    this.last = this.sql.exec<{ last: number | null }>("SELECT max(seq) AS last FROM feed").one().last ?? 0;
  }

  /** Writes one entry and drops the one that falls out of the bound; call only inside a commit. */
  append<K extends FeedKind>(kind: K, threadId: string | null, body: FeedBodies[K], now = new Date()): FeedFrame {
    const row: FeedRow = { seq: this.last + 1, ts: now.toISOString(), kind, thread_id: threadId, body: JSON.stringify(body) };
    this.sql.exec("INSERT INTO feed (seq, ts, kind, thread_id, body) VALUES (?, ?, ?, ?, ?)", row.seq, row.ts, kind, threadId, row.body);
    this.sql.exec("DELETE FROM feed WHERE seq <= ?", row.seq - FEED_RETAIN);
    this.last = row.seq;
    return toFrame(row);
  }

  /**
   * Records `thread-changed` when the summary says something the last one recorded did
   * not. Threads push the same summary more than once (a timed push after an immediate
   * one, the safety alarm), and pushes can cross: an older one (lower `lastSeq`) is dropped.
   */
  threadChanged(summary: ThreadSummary): FeedFrame | null {
    const text = JSON.stringify(summary);
    const before = this.sql
      .exec<{ last_seq: number; summary: string }>("SELECT last_seq, summary FROM last_summary WHERE thread_id = ?", summary.id)
      .toArray()[0];
    if (before && (before.summary === text || before.last_seq > summary.lastSeq)) return null;
    this.remember(summary, text);
    return this.append("thread-changed", summary.id, { summary });
  }

  /** The summary a spawn starts from, so the push that follows it is not recorded as a change. */
  remember(summary: ThreadSummary, text = JSON.stringify(summary)): void {
    this.sql.exec("INSERT OR REPLACE INTO last_summary (thread_id, last_seq, summary) VALUES (?, ?, ?)", summary.id, summary.lastSeq, text);
  }

  /** Durable entries with seq > after, oldest first; a cursor older than what is kept starts at the oldest kept. */
  forward(after: number, limit: number): FeedRow[] {
    return this.sql
      .exec<FeedRow>("SELECT seq, ts, kind, thread_id, body FROM feed WHERE seq > ? AND seq <= ? ORDER BY seq ASC LIMIT ?", after, this.durable, limit)
      .toArray();
  }

  /** Durable entries with seq < before, newest first. */
  backward(before: number, limit: number): FeedRow[] {
    return this.sql
      .exec<FeedRow>("SELECT seq, ts, kind, thread_id, body FROM feed WHERE seq < ? AND seq <= ? ORDER BY seq DESC LIMIT ?", before, this.durable, limit)
      .toArray();
  }

  /** The oldest entry kept, or null while the feed is empty. */
  oldestSeq(): number | null {
    return this.sql.exec<{ seq: number | null }>("SELECT min(seq) AS seq FROM feed").one().seq;
  }

  /** Async only to serve as a follow source: feed bodies are small and live in the table. */
  async serialize(rows: FeedRow[]): Promise<FeedFrame[]> {
    return rows.map(toFrame);
  }
}

/** What a thread tells its workspace besides its summary, once the change is committed. */
export type ThreadNews = { kind: "thread-spawned" } | { kind: "thread-archived"; reason: string | null } | { kind: "thread-restored" };
