import { concat, encoder, HEARTBEAT, RETRY_HINT } from "../../lib/sse.js";

class Subscriber {
  queue: Uint8Array[] = [];
  dropped = 0;
  /** One write in flight; frames published meanwhile wait in the bounded queue. */
  busy = false;
  lastWrite = Date.now();
  constructor(readonly writer: WritableStreamDefaultWriter<Uint8Array>) {}
}

/**
 * Live deltas of one thread (`stream`): nothing is stored or replayed. Each subscriber
 * has a bounded queue; a reader that falls behind loses its oldest frames and is told
 * how many with a `gap` event, so a slow reader costs a fixed amount of memory. A write
 * settles only once its reader took the bytes, which is also how a reader that left
 * is found (a heartbeat write fails).
 */
export class DeltaHub {
  private readonly subscribers = new Set<Subscriber>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private listener: ((frames: unknown[]) => void) | null = null;

  constructor(
    private readonly cap: number,
    private readonly bufferFrames: number,
    private readonly heartbeatMs: number,
  ) {}

  get size(): number {
    return this.subscribers.size;
  }

  /** A new subscriber's stream, or null when the thread has as many as allowed. */
  open(): ReadableStream<Uint8Array> | null {
    if (this.subscribers.size >= this.cap) return null;
    const { readable, writable } = new IdentityTransformStream();
    const sub = new Subscriber(writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>);
    this.subscribers.add(sub);
    this.write(sub, encoder.encode(RETRY_HINT));
    this.startHeartbeat();
    return readable as ReadableStream<Uint8Array>;
  }

  /** Another reader of every delta (the AG-UI feed), which keeps its own subscribers. */
  tap(listener: (frames: unknown[]) => void): void {
    this.listener = listener;
  }

  publish(frames: unknown[]): void {
    if (frames.length === 0) return;
    this.listener?.(frames);
    if (this.subscribers.size === 0) return;
    let text = "";
    for (const f of frames) text += `event: delta\ndata: ${JSON.stringify(f)}\n\n`;
    const chunk = encoder.encode(text);
    for (const sub of this.subscribers) {
      if (!sub.busy) {
        this.write(sub, chunk);
        continue;
      }
      sub.queue.push(chunk);
      if (sub.queue.length > this.bufferFrames) {
        sub.queue.shift();
        sub.dropped++;
      }
    }
  }

  private write(sub: Subscriber, chunk: Uint8Array): void {
    sub.busy = true;
    sub.lastWrite = Date.now();
    sub.writer.write(chunk).then(
      () => this.written(sub),
      () => this.remove(sub),
    );
  }

  private written(sub: Subscriber): void {
    sub.busy = false;
    if (sub.queue.length === 0) return;
    const chunks = sub.queue;
    sub.queue = [];
    if (sub.dropped > 0) {
      chunks.unshift(encoder.encode(`event: gap\ndata: {"dropped":${sub.dropped}}\n\n`));
      sub.dropped = 0;
    }
    this.write(sub, concat(chunks));
  }

  private remove(sub: Subscriber): void {
    if (!this.subscribers.delete(sub)) return;
    sub.writer.abort().catch(() => {});
    if (this.subscribers.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    const tick = Math.max(50, Math.floor(this.heartbeatMs / 4));
    this.heartbeat = setInterval(() => {
      const due = Date.now() - this.heartbeatMs;
      for (const sub of this.subscribers) if (!sub.busy && sub.lastWrite <= due) this.write(sub, HEARTBEAT);
    }, tick);
  }
}
