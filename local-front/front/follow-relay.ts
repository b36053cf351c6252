import { request, type ClientRequest, type IncomingMessage } from "node:http";
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
/** Followers written in one turn of the event loop; about a millisecond of writes. */
const SLICE = 128;

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
 *
 * A write to a follower's socket is a system call that costs the front about as much as
 * everything else it does for one event, so a thousand followers take milliseconds of one
 * event loop that also carries every other request. The relay writes them in slices and
 * lets the loop's other work in between (see `flush`); a follower reached after more
 * frames came gets them all in one write, so the writes a second stop growing with the
 * event rate once the loop is busy.
 */
class Relay {
  private readonly followers = new Set<Follower>();
  /** Followers that came while the upstream stream was opening, each at the cursor it opens from. */
  private waiting: Follower[] = [];
  private readonly ring: Frame[] = [];
  private lastSeq: number;
  private response: IncomingMessage | null = null;
  /** The upstream stream's request until it answers: a close meanwhile (the front stopping) ends it too. */
  private opening: ClientRequest | null = null;
  private pending = "";
  /** A flush is under way: frames that arrive meanwhile go out in its next round. */
  private flushing = false;
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
   * a cursor past the end), that answer goes to the follower, and to those that came
   * meanwhile at the same cursor, as it is.
   */
  start(first: Follower): void {
    this.waiting.push(first);
    const req = request(
      {
        host: this.upstream.host,
        port: this.upstream.port,
        path: `/threads/${this.threadId}/follow?after=${this.lastSeq}`,
        agent: false,
      },
      (res) => {
        this.opening = null;
        if (this.closed) return void res.destroy();
        const waiting = this.waiting;
        this.waiting = [];
        if (res.statusCode !== 200) {
          forwardRefusal(waiting.map((f) => f.socket), res);
          this.close();
          return;
        }
        this.response = res;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => this.receive(chunk));
        res.on("end", () => this.close());
        res.on("error", () => this.close());
        for (const f of waiting) this.join(f);
        // All of them left while it opened: nobody is left to relay to.
        if (this.followers.size === 0) this.close();
      },
    );
    req.on("error", () => {
      for (const f of this.waiting) f.socket.destroy();
      this.waiting = [];
      this.close();
    });
    this.opening = req;
    req.end();
  }

  /**
   * Serves a follower from the ring when its cursor is inside it, or, while the upstream
   * stream is opening, when its cursor is the one it opens from; false otherwise.
   */
  tryJoin(follower: Follower): boolean {
    if (this.closed) return false;
    if (!this.response) {
      if (follower.cursor !== this.lastSeq) return false;
      this.waiting.push(follower);
      return true;
    }
    const oldest = this.ring[0]?.seq ?? this.lastSeq + 1;
    if (follower.cursor < oldest - 1 || follower.cursor > this.lastSeq) return false;
    this.join(follower);
    return true;
  }

  private join(f: Follower): void {
    if (f.socket.destroyed) return;
    const backlog = this.after(f.cursor);
    f.socket.write(backlog ? Buffer.concat([RESPONSE_HEAD, backlog]) : RESPONSE_HEAD);
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

  /** The ring's frames after `cursor`, as one buffer; null when there are none. */
  private after(cursor: number): Buffer | null {
    let i = this.ring.length;
    while (i > 0 && this.ring[i - 1]!.seq > cursor) i--;
    if (i === this.ring.length) return null;
    return i === this.ring.length - 1 ? this.ring[i]!.bytes : Buffer.concat(this.ring.slice(i).map((frame) => frame.bytes));
  }

  /** Splits the upstream into frames and keeps the recent ones; a flush takes them to the followers. */
  private receive(chunk: string): void {
    this.pending += chunk;
    const cut = this.pending.lastIndexOf("\n\n");
    if (cut < 0) return;
    const complete = this.pending.slice(0, cut + 2);
    this.pending = this.pending.slice(cut + 2);
    const before = this.lastSeq;
    for (const frame of complete.split("\n\n")) {
      if (!frame.startsWith("id: ")) continue;
      const seq = Number(frame.slice(4, frame.indexOf("\n")));
      this.ring.push({ seq, bytes: Buffer.from(`${frame}\n\n`) });
      this.lastSeq = seq;
    }
    if (this.ring.length > RING_FRAMES) this.ring.splice(0, this.ring.length - RING_FRAMES);
    if (this.lastSeq !== before && !this.flushing) this.flush();
  }

  /**
   * Writes every follower what it lacks, SLICE followers at a time, each slice after the
   * loop has served what else came in (setImmediate runs after the poll for I/O). Each
   * follower gets the frames after its own cursor, so one reached after more frames came
   * gets them in the same write; rounds go on until every follower has the last frame. A
   * follower whose unsent output passes MAX_BUFFERED, or whose cursor fell out of the
   * ring, is dropped: it resumes from the log with Last-Event-ID.
   */
  private flush(): void {
    this.flushing = true;
    let round = [...this.followers];
    let roundFrom = this.lastSeq;
    let at = 0;
    // Followers at one cursor share their bytes, while no frame has come since.
    let shared = new Map<number, Buffer | null>();
    let sharedTo = this.lastSeq;
    const slice = () => {
      if (this.closed) return;
      if (sharedTo !== this.lastSeq) ((shared = new Map()), (sharedTo = this.lastSeq));
      const now = Date.now();
      const end = Math.min(at + SLICE, round.length);
      for (; at < end; at++) {
        const f = round[at]!;
        if (f.cursor >= this.lastSeq || !this.followers.has(f)) continue;
        if (f.socket.writableLength > MAX_BUFFERED || f.cursor < (this.ring[0]?.seq ?? 0) - 1) {
          this.leave(f);
          continue;
        }
        let bytes = shared.get(f.cursor);
        if (bytes === undefined) shared.set(f.cursor, (bytes = this.after(f.cursor)));
        if (bytes) f.socket.write(bytes);
        f.cursor = this.lastSeq;
        f.lastWrite = now;
      }
      if (at < round.length) return void setImmediate(slice);
      // Frames that came during the round are still owed to the followers it reached first.
      if (this.closed || roundFrom === this.lastSeq) return void (this.flushing = false);
      round = [...this.followers];
      roundFrom = this.lastSeq;
      at = 0;
      setImmediate(slice);
    };
    slice();
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
    this.opening?.destroy();
    this.response?.destroy();
    // Followers reconnect with Last-Event-ID and resume from the log.
    for (const f of [...this.followers, ...this.waiting]) f.socket.destroy();
    this.followers.clear();
    this.waiting = [];
    this.onClose(this);
  }
}

function forwardRefusal(sockets: Socket[], res: IncomingMessage): void {
  const chunks: Buffer[] = [];
  res.on("data", (c: Buffer) => chunks.push(c));
  res.on("end", () => {
    const body = Buffer.concat(chunks);
    const type = res.headers["content-type"] ?? "application/json";
    const answer = Buffer.concat([
      Buffer.from(`HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`),
      body,
    ]);
    for (const socket of sockets) socket.end(answer);
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
