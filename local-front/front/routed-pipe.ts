import { readSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { CODES } from "../../src/api/errors.js";
import { BodyCounter, closes, closingHead, jsonAnswer, readHead, readRequest, refusalBytes, requestBody, responseFraming, type Head, type Refusal, type RequestBody } from "./http-framing.js";
import { log as frontLog, type Logger } from "../process/log.js";

export interface Upstream {
  host: string;
  port: number;
}

/** Chooses the workerd process for one request from its method and target. */
export type PickUpstream = (method: string, target: string) => Upstream;

/** Takes over a connection whose next request is this head (the follow relay); false to leave it. */
export type Takeover = (client: Socket, head: Head) => boolean;

/** How long a client may take. */
export interface FrontLimits {
  /**
   * A request head must be whole this long after its first byte, or the front answers 408
   * and closes. A head is at most 64 KiB: any client sends one in well under a second, so
   * 10 s is far from a slow network and still frees a connection held by a trickle soon.
   */
  headMs: number;
  /**
   * A client connection may be silent this long between requests (then it is closed) or
   * within a request body (then the front answers 408, unless the answer has begun, and
   * closes). 30 s outlasts any pause of a client that is still sending, and matches what
   * clients expect of a keep-alive connection; waiting for an answer has no limit here
   * (`send` waits for a whole turn).
   */
  idleMs: number;
}

export const FRONT_LIMITS: FrontLimits = { headMs: 10_000, idleMs: 30_000 };

export interface RoutedOptions {
  limits?: FrontLimits;
  log?: Pick<Logger, "warn" | "error">;
}

/**
 * workerd closes a keep-alive connection after 5 s idle without saying so; a request
 * written into that moment is lost. A backend connection idle this long is not reused
 * (and a request lost anyway is sent again: see `retry`).
 */
const BACKEND_IDLE_MS = 3000;
/** Bytes of pipelined requests held while an earlier response is still coming. */
const MAX_HELD = 1 << 20;
/** A request up to this size is kept until its answer starts, to be sent again if a reused connection drops it. */
const RETRY_MAX = 64 * 1024;
/** How long a client may take to close after the front ended the connection; what it sends meanwhile is read and dropped. */
const LINGER_MS = 5_000;
/** Most of an answer read from a reset connection's descriptor (see `salvage`); answers that come before the body are small. */
const SALVAGE_MAX = 1 << 20;
/** Longest path written to the log. */
const LOGGED_PATH = 200;

interface Backend {
  key: string;
  up: Upstream;
  socket: Socket;
  idleSince: number;
  /** Responses this connection has carried. */
  served: number;
}

interface InFlight {
  backend: Backend;
  method: string;
  target: string;
  /** The request body still to forward; null once it all went. */
  request: RequestBody | null;
  /** The head, until it is sent: held back while the body's first bytes are checked. */
  unsentHead: Buffer | null;
  /** Copies of what was sent, while small and unanswered; null otherwise. */
  sent: Buffer[] | null;
  sentBytes: number;
  /** On a connection that had answered before: workerd may have closed it, unread, as the request went. */
  reused: boolean;
  retried: boolean;
  /** Some of the response has arrived. */
  answered: boolean;
  /** Response head bytes seen so far, until the head is whole. */
  head: Buffer;
  response: BodyCounter | null;
  closeAfter: boolean;
}

const BAD_GATEWAY = JSON.stringify({ error: "the workerd process that holds this request's thread did not answer", code: CODES.upstreamUnavailable });

/** A target as the log shows it: the path, never the query, bounded. */
function loggedPath(target: string): string {
  const q = target.indexOf("?");
  return (q < 0 ? target : target.slice(0, q)).slice(0, LOGGED_PATH);
}

/**
 * What a socket whose write just failed still holds to be read. workerd answers some
 * requests without reading their body (a 409, a 503 while draining) and then closes with
 * the body unread, so its kernel resets the connection. A write into that reset fails at
 * once, and Node destroys the socket (on the next tick) before its loop reads the answer
 * that arrived first, though the kernel still holds it: so it is read here, from the
 * descriptor, before that happens.
 */
function salvage(socket: Socket): Buffer[] {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  const got: Buffer[] = [];
  if (typeof fd !== "number" || fd < 0) return got;
  for (let total = 0; total < SALVAGE_MAX; ) {
    const buf = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch {
      break; // EAGAIN: nothing more is there; ECONNRESET: the reset, after what it held.
    }
    if (n <= 0) break;
    got.push(buf.subarray(0, n));
    total += n;
  }
  return got;
}

/**
 * One client connection: each request goes whole to the workerd process `pick` names,
 * over a keep-alive connection to that process held for this client, and its response
 * comes back before the next request is sent, so responses keep their order. Bytes are
 * forwarded as they arrive; only heads are read, length bodies counted and chunked ones
 * re-framed. A request the front cannot frame unambiguously (http-framing.ts) is answered
 * here with JSON, before any byte of it reaches workerd, and the connection closes.
 */
export class RoutedConnection {
  private held: Buffer = Buffer.alloc(0);
  private readonly backends = new Map<string, Backend>();
  private current: InFlight | null = null;
  private detached = false;
  /** Bytes of `held` already scanned for the end of an incomplete head. */
  private headScanned = 0;
  private headTimer: NodeJS.Timeout | null = null;
  private readonly limits: FrontLimits;
  private readonly log: Pick<Logger, "warn" | "error">;

  constructor(
    private readonly client: Socket,
    private readonly pick: PickUpstream,
    private readonly takeover: Takeover | null,
    options: RoutedOptions = {},
  ) {
    this.limits = options.limits ?? FRONT_LIMITS;
    this.log = options.log ?? frontLog;
    client.on("data", this.onClientData);
    client.on("error", () => this.destroy());
    client.on("close", () => this.destroy());
    client.setTimeout(this.limits.idleMs, this.onClientIdle);
  }

  private readonly onClientData = (chunk: Buffer) => {
    this.held = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.pump();
  };

  private readonly onClientIdle = () => {
    if (this.detached) return;
    const cur = this.current;
    if (!cur) return this.held.length ? this.refuseHeadTimeout() : this.destroy();
    // A whole request may wait for its answer as long as that takes.
    if (!cur.request) return;
    if (cur.answered) return this.destroy();
    this.refuse({ status: 408, code: CODES.requestTimeout, error: `the request body stalled: no byte for ${this.limits.idleMs / 1000} s` });
  };

  private pump(): void {
    while (!this.detached) {
      const cur = this.current;
      if (cur?.request) {
        if (!this.held.length || !this.forwardBody(cur)) return;
        continue;
      }
      if (cur) {
        if (this.held.length > MAX_HELD) this.client.pause();
        return;
      }
      // RFC 9112 2.2: empty lines before a request line are ignored (some clients send one after a body).
      while (this.held.length >= 2 && this.held[0] === 13 && this.held[1] === 10) {
        this.held = this.held.subarray(2);
        this.headScanned = 0;
      }
      if (!this.held.length) return;
      const head = readHead(this.held, this.headScanned);
      if (head === null) {
        this.headScanned = this.held.length;
        this.headTimer ??= setTimeout(() => this.refuseHeadTimeout(), this.limits.headMs);
        return;
      }
      this.headScanned = 0;
      this.clearHeadTimer();
      if ("status" in head) return this.refuse(head);
      const request = readRequest(head);
      if ("status" in request) return this.refuse(request, head.startLine[0], head.startLine[1]);
      const { method, target, framing } = request;
      if (this.takeover && framing.kind === "none" && this.held.length === head.length) {
        this.detach();
        this.client.setTimeout(0);
        if (this.takeover(this.client, head)) return this.detachAll();
        this.client.setTimeout(this.limits.idleMs);
        this.reattach();
      }
      const backend = this.backend(this.pick(method, target));
      const next: InFlight = {
        backend,
        method,
        target,
        request: requestBody(framing),
        unsentHead: this.held.subarray(0, head.length),
        sent: [],
        sentBytes: 0,
        reused: backend.served > 0,
        retried: false,
        answered: false,
        head: Buffer.alloc(0),
        response: null,
        closeAfter: request.closes,
      };
      this.current = next;
      this.held = this.held.subarray(head.length);
      // Body bytes that came with the head are checked before the head goes: a body refused
      // from its first bytes never reaches workerd. Without any, the head goes at once (a
      // client may wait for an answer to its head before it sends the body).
      if (!next.request || !this.held.length) this.sendHead(next);
    }
  }

  /** Forwards what `held` has of the current body; false when it needs more bytes (or the connection ended). */
  private forwardBody(cur: InFlight): boolean {
    const out: Buffer[] = [];
    const n = cur.request!.forward(this.held, out);
    if (typeof n !== "number") {
      this.refuse(n);
      return false;
    }
    this.held = this.held.subarray(n);
    const done = cur.request!.done;
    this.sendHead(cur);
    for (const bytes of out) if (this.current === cur) this.send(cur, bytes);
    // An answer that came while the body was still being sent ended the request (see `finish`).
    if (this.current !== cur) return false;
    if (done) cur.request = null;
    return done;
  }

  private sendHead(cur: InFlight): void {
    const head = cur.unsentHead;
    if (!head) return;
    cur.unsentHead = null;
    this.send(cur, head);
  }

  private send(cur: InFlight, bytes: Buffer): void {
    if (!bytes.length) return;
    if (cur.sent) {
      cur.sentBytes += bytes.length;
      if (cur.sentBytes > RETRY_MAX) cur.sent = null;
      else cur.sent.push(Buffer.from(bytes));
    }
    const socket = cur.backend.socket;
    if (socket.write(bytes)) return;
    if (socket.errored) {
      const backend = cur.backend;
      for (const chunk of salvage(socket)) if (this.current === cur) this.onBackendData(backend, chunk);
      return;
    }
    this.client.pause();
    socket.once("drain", () => this.client.resume());
  }

  private backend(up: Upstream): Backend {
    const key = `${up.host}:${up.port}`;
    const known = this.backends.get(key);
    if (known && !known.socket.destroyed && Date.now() - known.idleSince < BACKEND_IDLE_MS) return known;
    known?.socket.destroy();
    const socket = connect({ host: up.host, port: up.port, noDelay: true });
    const backend: Backend = { key, up, socket, idleSince: Date.now(), served: 0 };
    this.backends.set(key, backend);
    socket.on("data", (chunk: Buffer) => this.onBackendData(backend, chunk));
    socket.on("error", () => this.onBackendGone(backend));
    socket.on("close", () => this.onBackendGone(backend));
    return backend;
  }

  private onBackendData(backend: Backend, chunk: Buffer): void {
    const cur = this.current;
    // workerd only ever answers what it was asked; anything else is a broken connection.
    if (!cur || cur.backend !== backend) return this.destroy();
    cur.answered = true;
    cur.sent = null;
    // A head is held until it is whole, so it can be read (and an event stream's amended) before the client sees it.
    if (cur.response) this.toClient(backend, chunk);
    this.scanResponse(cur, chunk);
  }

  private toClient(backend: Backend, bytes: Buffer): void {
    if (!bytes.length || this.client.write(bytes)) return;
    backend.socket.pause();
    this.client.once("drain", () => backend.socket.resume());
  }

  private scanResponse(cur: InFlight, chunk: Buffer): void {
    let bytes = chunk;
    while (bytes.length && !this.detached) {
      if (!cur.response) {
        cur.head = cur.head.length ? Buffer.concat([cur.head, bytes]) : bytes;
        const head = readHead(cur.head);
        if (head === null) return;
        if ("status" in head) return this.destroy();
        const whole = cur.head;
        bytes = whole.subarray(head.length);
        cur.head = Buffer.alloc(0);
        const status = Number(head.startLine[1]);
        // An event stream lasts as long as its reader: the connection is its, so it becomes
        // a plain pipe rather than have every frame scanned (a thousand followers, a hundred
        // frames a second each). Its head says the connection closes with it, so no request
        // follows on it unread by the front's framing checks and routing.
        const stream = status === 200 && head.headers.get("content-type")?.startsWith("text/event-stream") === true;
        // An interim head goes on alone: what follows it is the next head, held until it is whole too.
        if (status >= 100 && status < 200 && status !== 101) {
          this.toClient(cur.backend, whole.subarray(0, head.length));
          continue;
        }
        this.toClient(cur.backend, stream ? Buffer.concat([closingHead(whole.subarray(0, head.length)), bytes]) : whole);
        if (status === 101) return this.becomeTunnel(cur.backend, null, bytes);
        if (stream) {
          const framing = responseFraming(head, cur.method);
          return this.becomeTunnel(cur.backend, framing === "bad" ? new BodyCounter({ kind: "close" }) : new BodyCounter(framing), bytes);
        }
        if (status >= 500) {
          const fields = { status, method: cur.method, path: loggedPath(cur.target) };
          if (status === 500) this.log.error("workerd answered 500", fields);
          else this.log.warn(`workerd answered ${status}`, fields);
        }
        const framing = responseFraming(head, cur.method);
        if (framing === "bad") return this.destroy();
        if (closes(head, head.startLine[0])) cur.closeAfter = true;
        cur.response = new BodyCounter(framing);
        if (cur.response.done) return this.finish(cur, bytes);
        continue;
      }
      const n = cur.response.feed(bytes);
      if (n < 0) return this.destroy();
      bytes = bytes.subarray(n);
      if (cur.response.done) return this.finish(cur, bytes);
    }
  }

  /** The response is whole: the next held request may go. */
  private finish(cur: InFlight, extra: Buffer): void {
    if (extra.length) return this.destroy();
    this.current = null;
    // Answered before its body was all sent (a 409, a 413): the rest of the body cannot be
    // told from a next request, so the connection ends after the answer (and lingers to
    // read and drop what the client still sends).
    if (cur.request) cur.closeAfter = true;
    cur.backend.idleSince = Date.now();
    cur.backend.served++;
    if (cur.closeAfter) return this.end();
    this.client.resume();
    this.pump();
  }

  private onBackendGone(backend: Backend): void {
    if (this.backends.get(backend.key) === backend) this.backends.delete(backend.key);
    const cur = this.current;
    if (!cur || cur.backend !== backend || this.detached) return;
    if (!cur.answered && this.retry(cur)) return;
    this.current = null;
    // A body delimited by the close ends here; nothing at all is a 502; anything else was cut off.
    if (cur.response?.untilClose) this.end();
    else if (!cur.answered) {
      this.log.error("a workerd process closed the connection without answering", { status: 502, method: cur.method, path: loggedPath(cur.target) });
      this.end(jsonAnswer("502 Bad Gateway", BAD_GATEWAY, "", cur.method));
    } else this.destroy();
  }

  /**
   * A reused connection that closed before any answer most likely closed idle as the
   * request went out, unread; workerd never began it. Sent again once, whole, on a
   * fresh connection. A request too large to have been kept, or still arriving, is not.
   */
  private retry(cur: InFlight): boolean {
    if (!cur.reused || cur.retried || !cur.sent || cur.request) return false;
    const sent = cur.sent;
    cur.backend.socket.destroy();
    cur.backend = this.backend(cur.backend.up);
    cur.retried = true;
    cur.reused = false;
    cur.sent = [];
    cur.sentBytes = 0;
    for (const bytes of sent) this.send(cur, bytes);
    return true;
  }

  private refuseHeadTimeout(): void {
    this.refuse({ status: 408, code: CODES.requestTimeout, error: `the request head did not arrive whole within ${this.limits.headMs / 1000} s` });
  }

  /**
   * Answers the request under way with `refusal` and closes. Whatever workerd has of it
   * (a head, part of a body) is cut off with its connection, so it never acts on it; if
   * the answer has begun, the connection is cut instead.
   */
  private refuse(refusal: Refusal, method?: string, target?: string): void {
    if (this.current?.answered) return this.destroy();
    // A head refused before it parsed still names its method in its first word.
    const answering = method ?? this.current?.method ?? this.held.toString("latin1", 0, 8).split(" ")[0];
    this.current = null;
    if (refusal.status >= 500) this.log.warn(`refused with ${refusal.status}`, { status: refusal.status, method: method?.slice(0, 32), path: target && loggedPath(target) });
    this.end(refusalBytes(refusal, answering));
  }

  /** Ends the client's connection after what was written (plus `last`), and lets it close. */
  private end(last?: Buffer): void {
    this.detachAll();
    if (last) this.client.end(last);
    else this.client.end();
    this.client.resume();
    setTimeout(() => this.client.destroy(), LINGER_MS).unref();
  }

  /**
   * From here on, the connection is bytes from this process, and, for an upgrade
   * (`stream` null), to it. An event stream's client was told the connection closes with
   * the stream: nothing it sends reaches workerd unread by the front; the stream's end
   * (only chunk sizes are read, never its frames) ends the connection, and pipelined
   * requests held behind it go unanswered, for the client to send again.
   */
  private becomeTunnel(backend: Backend, stream: BodyCounter | null, body: Buffer): void {
    this.backends.delete(backend.key);
    for (const b of this.backends.values()) b.socket.destroy();
    this.backends.clear();
    backend.socket.removeAllListeners("data");
    const upstream = backend.socket;
    this.detach();
    this.client.setTimeout(0);
    this.current = null;
    const close = () => {
      this.client.destroy();
      upstream.destroy();
    };
    this.client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    if (!stream && this.held.length) upstream.write(this.held);
    this.held = Buffer.alloc(0);
    if (!stream) {
      this.client.pipe(upstream);
      upstream.pipe(this.client);
      this.client.resume();
      return;
    }
    const ended = (bytes: Buffer) => stream.feed(bytes) < 0 || stream.done;
    this.client.on("data", close);
    upstream.pipe(this.client, { end: false });
    upstream.on("data", (bytes: Buffer) => {
      if (ended(bytes)) this.client.end(() => upstream.destroy());
    });
    if (ended(body)) this.client.end(() => upstream.destroy());
    this.client.resume();
  }

  private detach(): void {
    this.detached = true;
    this.clearHeadTimer();
    this.client.off("data", this.onClientData);
    this.client.pause();
  }

  private reattach(): void {
    this.detached = false;
    this.client.on("data", this.onClientData);
    this.client.resume();
  }

  private clearHeadTimer(): void {
    if (!this.headTimer) return;
    clearTimeout(this.headTimer);
    this.headTimer = null;
  }

  private detachAll(): void {
    this.detached = true;
    this.clearHeadTimer();
    this.client.off("data", this.onClientData);
    for (const b of this.backends.values()) b.socket.destroy();
    this.backends.clear();
  }

  private destroy(): void {
    this.detachAll();
    this.client.destroy();
  }
}
