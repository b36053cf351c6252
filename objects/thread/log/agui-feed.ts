import type { AguiEvent, AguiPage } from "../../../src/api/agui.js";
import { AGUI_STATE_KINDS, AguiProjection, type ProjectedEvent, type SingleRun } from "../../../src/rules/agui-projection.js";
import { concat, encoder, HEARTBEAT, RETRY_HINT } from "../../lib/sse.js";
import type { EventLog, SerializedEvent, StoredEvent } from "./event-log.js";

/** Catch-up reads this many events per write. */
const CATCH_UP_PAGE = 500;
/** A reader whose unsent frames pass this is closed; it resumes with `Last-Event-ID`. */
const MAX_PENDING_BYTES = 1 << 20;

/** A reply (or anything that ends one) closes the text being streamed. */
const ENDS_STREAMING = new Set(["reply", "tool-call", "turn-started", "turn-ended", "turn-failed"]);

const STATE_KINDS = AGUI_STATE_KINDS.map((k) => `'${k}'`).join(", ");

class Reader {
  live = false;
  busy = false;
  pending: Uint8Array[] = [];
  pendingBytes = 0;
  lastWrite = Date.now();
  constructor(
    readonly writer: WritableStreamDefaultWriter<Uint8Array>,
    readonly projection: AguiProjection,
    public cursor: number,
  ) {}
}

/** What the feed uses of its Thread. */
export interface AguiFeedThread {
  readonly sql: SqlStorage;
  readonly log: EventLog;
  readonly heartbeatMs: number;
  threadId(): string;
}

/**
 * `GET /threads/:id/agui` and the stream of `POST /threads/:id/agui`: the log and the
 * live deltas as AG-UI events (docs/agui.md). Each reader has its own projection, set
 * to its position by folding the turn it joins in; it catches up from the log, then
 * takes events as they become durable and deltas as they come, in the order the turn
 * produced them: a delta that arrives while an event before it is still being committed
 * waits behind that event, so a reply's text never reaches a reader after its end.
 */
export class AguiFeed {
  private readonly readers = new Set<Reader>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  /** Deltas that came while events before them were not yet durable, with the last seq written then. */
  private held: { after: number; frames: Record<string, unknown>[] }[] = [];
  /** The reply the model is writing now, so a reader that joins mid-reply gets its text so far. */
  private streaming: { turnId: string; text: string } | null = null;

  constructor(private readonly thread: AguiFeedThread) {}

  get size(): number {
    return this.readers.size;
  }

  open(after: number, single: SingleRun | null, signal: AbortSignal): ReadableStream<Uint8Array> {
    const { readable, writable } = new IdentityTransformStream();
    const projection = this.projectionAt(after, single);
    const reader = new Reader(writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>, projection, after);
    this.readers.add(reader);
    signal.addEventListener("abort", () => this.drop(reader), { once: true });
    this.startHeartbeat();
    void this.catchUp(reader, RETRY_HINT + frames(projection.opening(), null));
    return readable as ReadableStream<Uint8Array>;
  }

  /** One reverse page of the log as AG-UI frame groups, projected from the page's first event. */
  async page(before: number, limit: number): Promise<AguiPage> {
    const log = this.thread.log;
    const rows = log.backward(before, limit).reverse();
    const first = rows[0]?.seq ?? Math.min(before, log.durableSeq + 1);
    const projection = this.projectionAt(first - 1, null);
    const opening = projection.opening();
    const events = parse(await log.serialize(rows));
    const groups = events.map((e) => ({ seq: e.seq, events: projection.event(e) })).filter((g) => g.events.length > 0);
    return { opening, groups, ...(first > 1 ? { nextBefore: first } : {}) };
  }

  /** Live deltas of the running turn, as the engine sent them. */
  deltas(list: unknown[]): void {
    const frames = list as Record<string, unknown>[];
    const log = this.thread.log;
    if (log.lastSeq > log.durableSeq || this.held.length > 0) {
      this.held.push({ after: log.lastSeq, frames });
      return;
    }
    this.deliverDeltas(frames);
  }

  /** A batch on disk (or lost: readers are closed and resume from what the log holds). */
  settle(batch: SerializedEvent[], durable: boolean): void {
    if (!durable) {
      this.held = [];
      this.streaming = null;
      this.close();
      return;
    }
    // The append path of every thread passes here: with no reader and nothing streaming or held, there is nothing to do.
    if (this.readers.size === 0 && this.held.length === 0 && this.streaming === null) return;
    let live = false;
    for (const r of this.readers) live ||= r.live;
    for (const e of batch) {
      this.releaseDeltas(e.seq);
      if (ENDS_STREAMING.has(e.kind)) this.streaming = null;
      if (live) this.send(parse([e])[0]!);
    }
    this.releaseDeltas(Infinity);
  }

  close(): void {
    for (const r of [...this.readers]) this.drop(r);
  }

  /** A projection at `seq`: the turn running there folded from its start (only the kinds that change the projection). */
  private projectionAt(seq: number, single: SingleRun | null): AguiProjection {
    const projection = new AguiProjection(this.thread.threadId(), single);
    for (const h of this.heldAt(seq)) projection.holding(h.seq, h.text);
    const start = this.thread.sql
      .exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events WHERE kind = 'turn-started' AND seq <= ?", seq)
      .one().seq;
    if (start === null) return projection;
    const rows = this.thread.sql
      .exec<StoredEvent>(
        `SELECT seq, ts, kind, CASE WHEN kind IN ('reply', 'tool-result') THEN NULL ELSE body END AS body, blob, bytes
           FROM events WHERE seq >= ? AND seq <= ? AND kind IN (${STATE_KINDS}) ORDER BY seq`,
        start,
        seq,
      )
      .toArray();
    // The fold counts replies and tool results but reads none of their text, the only bodies large enough to be stored apart.
    for (const row of rows) projection.fold({ seq: row.seq, kind: row.kind, body: row.body ? (JSON.parse(row.body) as Record<string, unknown>) : {} });
    return projection;
  }

  /**
   * The messages still held at `seq`, with their text as last edited by then: what a
   * release after `seq` shows. One whose text is stored apart (a blob) is left out: its
   * release is shown as the bare `message-released` event.
   */
  private heldAt(seq: number): { seq: number; text: string }[] {
    const sql = this.thread.sql;
    const held = sql
      .exec<{ seq: number; body: string | null }>(
        `SELECT seq, body FROM events m WHERE kind = 'message' AND seq <= ? AND json_extract(body, '$.hold') = 1
           AND NOT EXISTS (SELECT 1 FROM events g WHERE g.kind IN ('message-released', 'message-deleted') AND g.seq <= ? AND json_extract(g.body, '$.target') = m.seq)`,
        seq,
        seq,
      )
      .toArray();
    return held.flatMap((m) => {
      const edit = sql
        .exec<{ body: string | null }>(
          "SELECT body FROM events WHERE kind = 'message-edited' AND seq <= ? AND json_extract(body, '$.target') = ? ORDER BY seq DESC LIMIT 1",
          seq,
          m.seq,
        )
        .toArray()[0];
      // An edit stored apart names its target only inside its blob: with one about, the text is not known here.
      const blobEdit = sql.exec("SELECT 1 FROM events WHERE kind = 'message-edited' AND body IS NULL AND seq > ? AND seq <= ? LIMIT 1", m.seq, seq).toArray().length > 0;
      if (blobEdit) return [];
      const body = edit ? edit.body : m.body;
      return body === null ? [] : [{ seq: m.seq, text: String((JSON.parse(body) as { text?: unknown }).text ?? "") }];
    });
  }


  private releaseDeltas(before: number): void {
    while (this.held.length > 0 && this.held[0]!.after < before) this.deliverDeltas(this.held.shift()!.frames);
  }

  private deliverDeltas(list: Record<string, unknown>[]): void {
    for (const f of list) {
      if (f.type !== "text" || typeof f.delta !== "string" || typeof f.turnId !== "string") continue;
      if (this.streaming?.turnId !== f.turnId) this.streaming = { turnId: f.turnId, text: "" };
      this.streaming.text += f.delta;
    }
    for (const r of this.readers) if (r.live) this.write(r, frames(list.flatMap((f) => r.projection.delta(f)), null), r.cursor);
  }

  private send(e: ProjectedEvent): void {
    for (const r of this.readers) if (r.live) this.write(r, frames(r.projection.event(e), e.seq), e.seq);
  }

  private write(r: Reader, text: string, cursor: number): void {
    if (!text) return;
    const chunk = encoder.encode(text);
    if (r.busy) {
      r.pending.push(chunk);
      r.pendingBytes += chunk.byteLength;
      if (r.pendingBytes > MAX_PENDING_BYTES) this.drop(r);
      return;
    }
    this.flush(r, chunk, cursor);
  }

  private flush(r: Reader, chunk: Uint8Array, cursor: number): void {
    r.busy = true;
    r.cursor = cursor;
    r.lastWrite = Date.now();
    r.writer.write(chunk).then(
      () => {
        r.busy = false;
        if (r.pending.length > 0) {
          const next = concat(r.pending);
          r.pending = [];
          r.pendingBytes = 0;
          this.flush(r, next, r.cursor);
        } else if (r.projection.finished) this.end(r);
      },
      () => this.drop(r),
    );
  }

  /**
   * Sends the log after the reader's cursor, then joins live delivery in the same
   * synchronous step as the read that found nothing new (as `FollowHub` does), and gives
   * it the reply being written, if any.
   */
  private async catchUp(r: Reader, head: string): Promise<void> {
    r.busy = true;
    try {
      let text = head;
      for (;;) {
        const rows = this.thread.log.forward(r.cursor, CATCH_UP_PAGE);
        if (rows.length === 0) {
          if (text) {
            await r.writer.write(encoder.encode(text));
            text = "";
            continue;
          }
          break;
        }
        for (const e of parse(await this.thread.log.serialize(rows))) text += frames(r.projection.event(e), e.seq);
        r.cursor = rows[rows.length - 1]!.seq;
        if (r.projection.finished) break;
      }
      if (r.projection.finished) {
        if (text) await r.writer.write(encoder.encode(text));
        return this.end(r);
      }
      r.live = true;
      r.busy = false;
      r.lastWrite = Date.now();
      // The text delivered so far follows every durable event, all of which the reader has now seen;
      // deltas held behind a commit come after that commit's events, as they do for every reader.
      const streaming = this.streaming;
      if (streaming) this.write(r, frames(r.projection.delta({ type: "text", turnId: streaming.turnId, delta: streaming.text }), null), r.cursor);
    } catch {
      this.drop(r);
    }
  }

  /** A single run finished: its stream ends once its last frame is written. */
  private end(r: Reader): void {
    if (!this.readers.delete(r)) return;
    r.writer.close().catch(() => {});
    if (this.readers.size === 0) this.stopHeartbeat();
  }

  private drop(r: Reader): void {
    if (!this.readers.delete(r)) return;
    r.writer.abort().catch(() => {});
    if (this.readers.size === 0) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    const tick = Math.max(50, Math.floor(this.thread.heartbeatMs / 4));
    this.heartbeat = setInterval(() => {
      const due = Date.now() - this.thread.heartbeatMs;
      for (const r of this.readers) if (r.live && !r.busy && r.lastWrite <= due) this.flush(r, HEARTBEAT, r.cursor);
    }, tick);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

function parse(events: SerializedEvent[]): ProjectedEvent[] {
  return events.map((e) => {
    const { seq, kind, body } = JSON.parse(e.json) as { seq: number; kind: string; body: Record<string, unknown> };
    return { seq, kind, body };
  });
}

/** AG-UI events as SSE frames; the last carries the seq they came from (none for deltas and openings). */
function frames(events: AguiEvent[], seq: number | null): string {
  let text = "";
  events.forEach((e, i) => {
    text += `${seq !== null && i === events.length - 1 ? `id: ${seq}\n` : ""}data: ${JSON.stringify(e)}\n\n`;
  });
  return text;
}
