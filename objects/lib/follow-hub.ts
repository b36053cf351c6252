import { concat, encoder, eventFrame, HEARTBEAT, RETRY_HINT, type Frame } from "./sse.js";

/** Catch-up reads this many events per write. */
const CATCH_UP_PAGE = 500;
/** A follower whose unread backlog passes this re-reads from the log instead of buffering. */
const MAX_PENDING_BYTES = 1 << 20;

/**
 * Where followers catch up from: a log that shows durable entries only. `forward` is
 * synchronous on purpose: the read that finds nothing new and the join to live delivery
 * must be one step (see `catchUp`).
 */
export interface FollowSource<R extends { seq: number }, F extends Frame> {
  /** Durable entries with seq > after, oldest first. */
  forward(after: number, limit: number): R[];
  serialize(rows: R[]): Promise<F[]>;
  /** Everything written so far is on disk: readers may see it. */
  markDurable(): void;
}

export interface FollowOptions<F> {
  /** Only entries it accepts are sent; the cursor still moves past the others. */
  accept?: (entry: F) => boolean;
  /** The client's request: its abort frees the follower at once rather than at the next failed write. */
  signal?: AbortSignal;
}

class Follower<F> {
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
    readonly accept: ((entry: F) => boolean) | undefined,
  ) {
    this.cursor = after;
  }
}

/**
 * The `follow` subscribers of one log: a thread's events, or a workspace's feed.
 *
 * Each frame is encoded once and the same bytes go to every follower. A follower has
 * at most one write in flight (a write settles only when its reader took the bytes);
 * frames published meanwhile are joined into its next write. Under load this batches
 * by itself: fast readers get every frame at once, slow ones get fewer, larger writes,
 * and the cost per published event stops growing with the rate. A reader too slow to
 * keep up is not buffered without bound: it drops its backlog and catches up from the
 * log, so it still sees every event exactly once. A follower with a filter gets its own
 * bytes of the frames it accepts.
 */
export class FollowHub<R extends { seq: number }, F extends Frame> {
  private readonly followers = new Set<Follower<F>>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly log: FollowSource<R, F>,
    private readonly heartbeatMs: number,
  ) {}

  get size(): number {
    return this.followers.size;
  }

  /** Followers past their catch-up, taking live delivery. */
  get liveCount(): number {
    let n = 0;
    for (const f of this.followers) if (f.live) n++;
    return n;
  }

  open(after: number, options: FollowOptions<F> = {}): ReadableStream<Uint8Array> {
    const { readable, writable } = new IdentityTransformStream();
    const follower = new Follower(writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>, after, options.accept);
    this.followers.add(follower);
    options.signal?.addEventListener("abort", () => this.drop(follower), { once: true });
    this.startHeartbeat();
    void this.catchUp(follower, RETRY_HINT);
    return readable as ReadableStream<Uint8Array>;
  }

  /**
   * The commit queue's report on a batch. A durable batch becomes visible in the log and
   * goes to live followers in one step (see `catchUp`). If the commit failed, followers
   * are closed instead: they reconnect and resume from whatever the log really holds.
   * Answers whether the batch is durable.
   */
  settle(batch: F[], durable: boolean): boolean {
    if (!durable) {
      this.close();
      return false;
    }
    this.log.markDurable();
    if (batch.length > 0) this.publish(batch);
    return true;
  }

  /** Sends a batch of consecutive events, encoded once, to every live follower. */
  publish(events: F[]): void {
    if (this.followers.size === 0) return;
    let shared: Uint8Array | null = null;
    const last = events[events.length - 1]!.seq;
    for (const f of this.followers) {
      if (!f.live) continue;
      const chunk = f.accept ? encode(events.filter(f.accept)) : (shared ??= encode(events));
      // Nothing it wants: its cursor may stay behind, a re-read skips the same entries again.
      if (!chunk) continue;
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

  private write(f: Follower<F>, chunk: Uint8Array, cursor: number): void {
    f.busy = true;
    f.cursor = cursor;
    f.lastWrite = Date.now();
    f.writer.write(chunk).then(
      () => this.written(f),
      () => this.drop(f),
    );
  }

  private written(f: Follower<F>): void {
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
  private async catchUp(f: Follower<F>, prefix: string): Promise<void> {
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
        for (const e of events) if (!f.accept || f.accept(e)) text += eventFrame(e);
        head = "";
        f.cursor = rows[rows.length - 1]!.seq;
        if (!text) continue;
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

  private drop(f: Follower<F>): void {
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

/** Frames as one chunk, or null when there are none. */
function encode(frames: Frame[]): Uint8Array | null {
  if (frames.length === 0) return null;
  let text = "";
  for (const e of frames) text += eventFrame(e);
  return encoder.encode(text);
}
