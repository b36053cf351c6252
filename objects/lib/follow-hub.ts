import type { EventLog, SerializedEvent } from "./event-log.js";
import { concat, encoder, eventFrame, HEARTBEAT, RETRY_HINT } from "./sse.js";

/** Catch-up reads this many events per write. */
const CATCH_UP_PAGE = 500;
/** A follower whose unread backlog passes this re-reads from the log instead of buffering. */
const MAX_PENDING_BYTES = 1 << 20;

class Follower {
  /** Seq of the last event handed to the writer (delivered, or in flight). */
  cursor: number;
  /** One write in flight at a time; what arrives meanwhile is coalesced into the next. */
  busy = false;
  live = false;
  pending: Uint8Array[] = [];
  pendingBytes = 0;
  pendingCursor = 0;
  /** Set when the backlog overflowed: the next write re-reads the log from `cursor`. */
  behind = false;
  lastWrite = Date.now();

  constructor(
    readonly writer: WritableStreamDefaultWriter<Uint8Array>,
    after: number,
  ) {
    this.cursor = after;
  }
}

/**
 * The `follow` subscribers of one thread.
 *
 * Each frame is encoded once and the same bytes go to every follower. A follower has
 * at most one write in flight (a write settles only when its reader took the bytes);
 * frames published meanwhile are joined into its next write. Under load this batches
 * by itself: fast readers get every frame at once, slow ones get fewer, larger writes,
 * and the cost per published event stops growing with the rate. A reader too slow to
 * keep up is not buffered without bound: it drops its backlog and catches up from the
 * log, so it still sees every event exactly once.
 */
export class FollowHub {
  private readonly followers = new Set<Follower>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly heartbeatMs: number,
  ) {}

  get size(): number {
    return this.followers.size;
  }

  open(after: number): ReadableStream<Uint8Array> {
    const { readable, writable } = new IdentityTransformStream();
    const follower = new Follower(writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>, after);
    this.followers.add(follower);
    this.startHeartbeat();
    void this.catchUp(follower, RETRY_HINT);
    return readable as ReadableStream<Uint8Array>;
  }

  /** Sends a batch of consecutive events, encoded once, to every live follower. */
  publish(events: SerializedEvent[]): void {
    if (this.followers.size === 0) return;
    let text = "";
    for (const e of events) text += eventFrame(e);
    const chunk = encoder.encode(text);
    const last = events[events.length - 1]!.seq;
    for (const f of this.followers) {
      if (!f.live) continue;
      if (!f.busy) {
        this.write(f, chunk, last);
        continue;
      }
      if (f.behind) continue;
      f.pending.push(chunk);
      f.pendingBytes += chunk.byteLength;
      f.pendingCursor = last;
      if (f.pendingBytes > MAX_PENDING_BYTES) {
        f.pending = [];
        f.pendingBytes = 0;
        f.behind = true;
      }
    }
  }

  private write(f: Follower, chunk: Uint8Array, cursor: number): void {
    f.busy = true;
    f.cursor = cursor;
    f.lastWrite = Date.now();
    f.writer.write(chunk).then(
      () => this.written(f),
      () => this.drop(f),
    );
  }

  private written(f: Follower): void {
    f.busy = false;
    if (f.behind) {
      f.behind = false;
      f.live = false;
      void this.catchUp(f, "");
    } else if (f.pending.length > 0) {
      const chunk = concat(f.pending);
      f.pending = [];
      f.pendingBytes = 0;
      this.write(f, chunk, f.pendingCursor);
    }
  }

  /**
   * Sends the log after the follower's cursor page by page, then joins the live set.
   * The log shows only durable events, and a batch becomes durable in the same step that
   * publishes it; the last read that finds nothing new and the join happen in one
   * synchronous step, so no event falls between catch-up and live delivery, and none
   * arrives twice.
   */
  private async catchUp(f: Follower, prefix: string): Promise<void> {
    f.busy = true;
    try {
      let head = prefix;
      for (;;) {
        const rows = this.log.forward(f.cursor, CATCH_UP_PAGE);
        if (rows.length === 0) {
          if (!head) break;
          await f.writer.write(encoder.encode(head));
          head = "";
          continue;
        }
        const events = await this.log.serialize(rows);
        let text = head;
        for (const e of events) text += eventFrame(e);
        head = "";
        f.cursor = rows[rows.length - 1]!.seq;
        f.lastWrite = Date.now();
        await f.writer.write(encoder.encode(text));
      }
      f.live = true;
      f.busy = false;
      f.lastWrite = Date.now();
    } catch {
      this.drop(f);
    }
  }

  private drop(f: Follower): void {
    if (!this.followers.delete(f)) return;
    f.writer.abort().catch(() => {});
    if (this.followers.size === 0) this.stopHeartbeat();
  }

  /** Heartbeats keep idle streams open through intermediaries and find readers that left. */
  private startHeartbeat(): void {
    if (this.heartbeat) return;
    const tick = Math.max(50, Math.floor(this.heartbeatMs / 4));
    this.heartbeat = setInterval(() => {
      const due = Date.now() - this.heartbeatMs;
      for (const f of this.followers) {
        if (f.live && !f.busy && f.lastWrite <= due) this.write(f, HEARTBEAT, f.cursor);
      }
    }, tick);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  close(): void {
    for (const f of [...this.followers]) this.drop(f);
  }
}
