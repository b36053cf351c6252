import type { EventBodies, EventKind } from "../../../src/api/events.js";
import type { BlobStore } from "./blob-store.js";

/** One row of the log as SQLite holds it: the body is JSON text, or a blob's hash. */
export type StoredEvent = {
  seq: number;
  ts: string;
  kind: EventKind;
  body: string | null;
  blob: string | null;
  /** UTF-8 size of a body stored apart; null for a body kept in the log. */
  bytes: number | null;
};

/** An event as readers receive it, already serialized: pages and frames splice these strings. */
export interface SerializedEvent {
  seq: number;
  kind: EventKind;
  json: string;
}

export const LOG_SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    seq   INTEGER PRIMARY KEY,
    ts    TEXT NOT NULL,
    kind  TEXT NOT NULL,
    body  TEXT,
    blob  TEXT,
    bytes INTEGER
  );
`;

const encoder = new TextEncoder();

function envelope(row: StoredEvent, bodyJson: string): string {
  const blob = row.blob ? `,"blob":{"sha256":"${row.blob}","bytes":${row.bytes}}` : "";
  return `{"seq":${row.seq},"ts":"${row.ts}","kind":${JSON.stringify(row.kind)},"body":${bodyJson}${blob}}`;
}

/**
 * The thread's append-only log. Seqs start at 1 and have no gaps: the next seq is taken
 * from memory and written in the same synchronous step, so no other request can
 * interleave between choosing a seq and storing it.
 *
 * Readers see events up to `durableSeq` only: an event written into a batch that is
 * still being committed is invisible until the batch is on disk.
 */
export class EventLog {
  private last: number;
  private durable: number;

  constructor(
    private readonly sql: SqlStorage,
    private readonly blobs: BlobStore,
    private readonly blobThreshold: number,
  ) {
    const row = sql.exec<{ last: number | null }>("SELECT max(seq) AS last FROM events").one();
    this.last = row.last ?? 0;
    this.durable = this.last;
  }

  /** The last event written, durable or not: the next append takes the seq after it. */
  get lastSeq(): number {
    return this.last;
  }

  /** The last event readers may see. */
  get durableSeq(): number {
    return this.durable;
  }

  /**
   * A write was rolled back (its savepoint undone: a full volume refused a later statement
   * of it): the next seq follows the last row SQLite still holds, so no seq is skipped.
   */
  rolledBack(): void {
    this.last = this.sql.exec<{ last: number | null }>("SELECT max(seq) AS last FROM events").one().last ?? 0;
  }

  /** Everything written so far is on disk. */
  markDurable(): void {
    this.durable = this.last;
  }

  /**
   * Prepares a body for appending: a large one goes to the blob store first, so the
   * log never refers to a body that was not saved. Awaits I/O; call `commit` after.
   */
  async prepare<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<PreparedEvent> {
    const text = JSON.stringify(body);
    // A UTF-16 unit is at most 3 UTF-8 bytes: short text needs no encoding to be measured.
    if (text.length * 3 <= this.blobThreshold || encoder.encode(text).byteLength <= this.blobThreshold)
      return { kind, text, blob: null, bytes: null };
    const ref = await this.blobs.put(text);
    return { kind, text, blob: ref.sha256, bytes: ref.bytes };
  }

  /** Writes a prepared event synchronously and returns it serialized. */
  commit(prepared: PreparedEvent, now = new Date()): SerializedEvent & { ts: string } {
    const seq = this.last + 1;
    const ts = now.toISOString();
    this.sql.exec(
      "INSERT INTO events (seq, ts, kind, body, blob, bytes) VALUES (?, ?, ?, ?, ?, ?)",
      seq,
      ts,
      prepared.kind,
      prepared.blob ? null : prepared.text,
      prepared.blob,
      prepared.bytes,
    );
    this.last = seq;
    const row: StoredEvent = { seq, ts, kind: prepared.kind, body: null, blob: prepared.blob, bytes: prepared.bytes };
    // Only followers read the envelope: an append with none connected never builds it.
    return {
      seq,
      ts,
      kind: prepared.kind,
      get json() {
        return envelope(row, prepared.text);
      },
    };
  }

  /** Durable events with seq > after, oldest first. */
  forward(after: number, limit: number): StoredEvent[] {
    return this.sql
      .exec<StoredEvent>(
        "SELECT seq, ts, kind, body, blob, bytes FROM events WHERE seq > ? AND seq <= ? ORDER BY seq ASC LIMIT ?",
        after,
        this.durable,
        limit,
      )
      .toArray();
  }

  /** Durable events with seq < before, newest first. */
  backward(before: number, limit: number): StoredEvent[] {
    return this.sql
      .exec<StoredEvent>(
        "SELECT seq, ts, kind, body, blob, bytes FROM events WHERE seq < ? AND seq <= ? ORDER BY seq DESC LIMIT ?",
        before,
        this.durable,
        limit,
      )
      .toArray();
  }

  /** One durable event. */
  get(seq: number): StoredEvent | null {
    if (seq > this.durable) return null;
    return (
      this.sql.exec<StoredEvent>("SELECT seq, ts, kind, body, blob, bytes FROM events WHERE seq = ?", seq).toArray()[0] ?? null
    );
  }

  /** Serializes rows, fetching bodies stored apart in parallel. */
  async serialize(rows: StoredEvent[]): Promise<SerializedEvent[]> {
    const bodies = await Promise.all(rows.map((r) => (r.blob ? this.blobs.get(r.blob) : r.body!)));
    return rows.map((r, i) => ({ seq: r.seq, kind: r.kind, json: envelope(r, bodies[i]!) }));
  }

  async body(row: StoredEvent): Promise<string> {
    return row.blob ? this.blobs.get(row.blob) : row.body!;
  }
}

export interface PreparedEvent {
  kind: EventKind;
  text: string;
  blob: string | null;
  bytes: number | null;
}
