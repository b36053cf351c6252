import { request, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { HEARTBEAT_COMMENT, RETRY_HINT, SSE_HEADERS } from "../../src/api/sse.js";
import { judgeCaller, type CallerPolicy } from "../../src/rules/caller-policy.js";
import { parseSeqCursor } from "../../src/shared/cursors.js";
import { isThreadId } from "../../src/shared/ids.js";
import type { Head } from "./http-framing.js";
import type { Upstream } from "./routed-pipe.js";

/** Frames a relay keeps so that followers joining near the head need no log read. */
const RING_FRAMES = 2048;
/** A follower whose unsent output passes this is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED = 1 << 20;

const FOLLOW_PATH = /^\/threads\/([^/?]+)\/follow(?:\?(.*))?$/;

export interface FollowRequest {
  threadId: string;
  after: number;
  /** The request's `Host`, judged by the caller policy before the relay serves it. */
  host: string | null;
}

/**
 * A `GET /threads/:id/follow` the relay may serve: a plain GET with no body and a valid
 * cursor, from no browser page (no `Origin`: a page's stream needs CORS answers, which the
 * worker gives). Anything else (including a bad cursor, which the worker refuses with 400)
 * goes through the pipe.
 */
export function parseFollowRequest(head: Head): FollowRequest | null {
  const { startLine, headers } = head;
  if (startLine.length !== 3 || startLine[0] !== "GET") return null;
  const m = FOLLOW_PATH.exec(startLine[1]!);
  if (!m || !isThreadId(m[1]!)) return null;
  const length = headers.get("content-length");
  if (length !== undefined && length !== "0") return null;
  if (headers.has("transfer-encoding") || headers.has("upgrade") || headers.has("origin")) return null;
  const after = parseSeqCursor(headers.get("last-event-id") ?? new URLSearchParams(m[2] ?? "").get("after") ?? "0");
  if (after === null) return null;
  return { threadId: m[1]!, after, host: headers.get("host") ?? null };
}

interface Follower {
  socket: Socket;
  cursor: number;
  lastWrite: number;
}

interface Frame {
  seq: number;
  bytes: Buffer;
}

const RESPONSE_HEAD = Buffer.from(
  "HTTP/1.1 200 OK\r\n" +
    Object.entries(SSE_HEADERS)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("") +
    "connection: close\r\n\r\n" +
    RETRY_HINT,
);
const HEARTBEAT = Buffer.from(HEARTBEAT_COMMENT);

/**
 * One thread's relay: a single `follow` stream from workerd, fanned out in Node to
 * every follower near the head. workerd then pays for one delivery per event instead of
 * one per follower; the front, on the other core, does the per-follower writes.
 */
class Relay {
  private readonly followers = new Set<Follower>();
  private readonly ring: Frame[] = [];
  private lastSeq: number;
  private response: IncomingMessage | null = null;
  private pending = "";
  closed = false;

  constructor(
    private readonly upstream: Upstream,
    readonly threadId: string,
    after: number,
    private readonly onClose: (relay: Relay) => void,
  ) {
    this.lastSeq = after;
  }

  get size(): number {
    return this.followers.size;
  }

  /**
   * Opens the upstream stream for the first follower. If workerd refuses (no such thread,
   * a cursor past the end), that answer goes to the follower as it is.
   */
  start(first: Follower): void {
    const req = request(
      {
        host: this.upstream.host,
        port: this.upstream.port,
        path: `/threads/${this.threadId}/follow?after=${this.lastSeq}`,
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          forwardRefusal(first.socket, res);
          this.close();
          return;
        }
        this.response = res;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => this.receive(chunk));
        res.on("end", () => this.close());
        res.on("error", () => this.close());
        this.join(first);
      },
    );
    req.on("error", () => {
      first.socket.destroy();
      this.close();
    });
    req.end();
  }

  /** Serves a follower from the ring when its cursor is inside it; false when it is not. */
  tryJoin(follower: Follower): boolean {
    if (!this.response || this.closed) return false;
    const oldest = this.ring[0]?.seq ?? this.lastSeq + 1;
    if (follower.cursor < oldest - 1 || follower.cursor > this.lastSeq) return false;
    this.join(follower);
    return true;
  }

  private join(f: Follower): void {
    const backlog = this.ring.filter((frame) => frame.seq > f.cursor).map((frame) => frame.bytes);
    f.socket.write(backlog.length ? Buffer.concat([RESPONSE_HEAD, ...backlog]) : RESPONSE_HEAD);
    f.cursor = this.lastSeq;
    f.lastWrite = Date.now();
    this.followers.add(f);
    const leave = () => this.leave(f);
    f.socket.on("close", leave).on("error", leave);
    // The follower sends nothing more; anything it does send is ignored.
    f.socket.resume();
  }

  private leave(f: Follower): void {
    if (!this.followers.delete(f)) return;
    f.socket.destroy();
    if (this.followers.size === 0) this.close();
  }

  /** Splits the upstream into frames, keeps the recent ones, and writes each batch once per follower. */
  private receive(chunk: string): void {
    this.pending += chunk;
    const cut = this.pending.lastIndexOf("\n\n");
    if (cut < 0) return;
    const complete = this.pending.slice(0, cut + 2);
    this.pending = this.pending.slice(cut + 2);
    let batch = "";
    for (const frame of complete.split("\n\n")) {
      if (!frame.startsWith("id: ")) continue;
      const seq = Number(frame.slice(4, frame.indexOf("\n")));
      const text = `${frame}\n\n`;
      batch += text;
      this.ring.push({ seq, bytes: Buffer.from(text) });
      this.lastSeq = seq;
    }
    if (this.ring.length > RING_FRAMES) this.ring.splice(0, this.ring.length - RING_FRAMES);
    if (!batch) return;
    const bytes = Buffer.from(batch);
    const now = Date.now();
    for (const f of this.followers) {
      if (f.socket.writableLength > MAX_BUFFERED) {
        this.leave(f);
        continue;
      }
      f.socket.write(bytes);
      f.cursor = this.lastSeq;
      f.lastWrite = now;
    }
  }

  heartbeat(idleSince: number): void {
    for (const f of this.followers) {
      if (f.lastWrite <= idleSince) {
        f.socket.write(HEARTBEAT);
        f.lastWrite = Date.now();
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.response?.destroy();
    // Followers reconnect with Last-Event-ID and resume from the log.
    for (const f of this.followers) f.socket.destroy();
    this.followers.clear();
    this.onClose(this);
  }
}

function forwardRefusal(socket: Socket, res: IncomingMessage): void {
  const chunks: Buffer[] = [];
  res.on("data", (c: Buffer) => chunks.push(c));
  res.on("end", () => {
    const body = Buffer.concat(chunks);
    const type = res.headers["content-type"] ?? "application/json";
    socket.end(
      Buffer.concat([
        Buffer.from(`HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`),
        body,
      ]),
    );
  });
}

/**
 * The front's follow relays, one per followed thread. A follow request is relayed when
 * it can join a running relay or start one; a follower too far behind the relay gets
 * its own stream from workerd, which catches it up from the log.
 */
export class FollowRelays {
  private readonly relays = new Map<string, Relay>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    /** The workerd process that holds a thread. */
    private readonly upstreamOf: (threadId: string) => Upstream,
    private readonly heartbeatMs: number,
    /** The worker's caller rules (src/rules/caller-policy.ts): a request they refuse goes on to the worker, which answers 403. */
    private readonly callers: CallerPolicy,
  ) {
    this.timer = setInterval(() => {
      const idleSince = Date.now() - this.heartbeatMs;
      for (const relay of this.relays.values()) relay.heartbeat(idleSince);
    }, Math.max(50, Math.floor(heartbeatMs / 4)));
    this.timer.unref();
  }

  /** Takes the connection and answers it; false when the caller should pipe it to workerd. */
  serve(socket: Socket, follow: FollowRequest): boolean {
    const headers = new Headers(follow.host === null ? {} : { host: follow.host });
    if (!judgeCaller("GET", headers, this.callers).ok) return false;
    const follower: Follower = { socket, cursor: follow.after, lastWrite: Date.now() };
    const running = this.relays.get(follow.threadId);
    if (running) return running.tryJoin(follower);
    const relay = new Relay(this.upstreamOf(follow.threadId), follow.threadId, follow.after, (r) => {
      if (this.relays.get(r.threadId) === r) this.relays.delete(r.threadId);
    });
    this.relays.set(follow.threadId, relay);
    relay.start(follower);
    return true;
  }

  close(): void {
    clearInterval(this.timer);
    for (const relay of [...this.relays.values()]) relay.close();
  }
}
