import { connect, type Socket } from "node:net";
import { CODES } from "../src/api/errors.js";
import { BodyCounter, readHead, requestFraming, responseFraming, type Head } from "./http-framing.js";

export interface Upstream {
  host: string;
  port: number;
}

/** Chooses the workerd process for one request from its method and target. */
export type PickUpstream = (method: string, target: string) => Upstream;

/** Takes over a connection whose next request is this head (the follow relay); false to leave it. */
export type Takeover = (client: Socket, head: Head, bytes: Buffer) => boolean;

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
/** A client connection with no request under way closes after this long without a byte. */
const CLIENT_IDLE_MS = 30_000;
/** How long a client may take to close after the front ended the connection. */
const LINGER_MS = 5_000;

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
  /** The request body still to forward; null once it all went. */
  request: BodyCounter | null;
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

/** Whether a Connection header lists `token`. */
function lists(value: string | undefined, token: string): boolean {
  return value !== undefined && value.split(",").some((t) => t.trim().toLowerCase() === token);
}

/** After this message the connection closes: it says so, or it is HTTP/1.0 without keep-alive. */
function closes(head: Head, version: string | undefined): boolean {
  const connection = head.headers.get("connection");
  return lists(connection, "close") || (version === "HTTP/1.0" && !lists(connection, "keep-alive"));
}

const BAD_GATEWAY = Buffer.from(
  (() => {
    const body = JSON.stringify({ error: "the workerd process that holds this request's thread did not answer", code: CODES.upstreamUnavailable });
    return `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
  })(),
);

/**
 * One client connection: each request goes whole to the workerd process `pick` names,
 * over a keep-alive connection to that process held for this client, and its response
 * comes back before the next request is sent, so responses keep their order. Bytes are
 * forwarded as they arrive; only heads are read and bodies counted. What cannot be
 * framed (a malformed head, an upgrade) becomes a plain byte pipe to one process, which
 * answers it as it would without the front.
 */
export class RoutedConnection {
  private held: Buffer = Buffer.alloc(0);
  private readonly backends = new Map<string, Backend>();
  private current: InFlight | null = null;
  private detached = false;

  constructor(
    private readonly client: Socket,
    private readonly pick: PickUpstream,
    private readonly takeover: Takeover | null,
  ) {
    client.on("data", this.onClientData);
    client.on("error", () => this.destroy());
    client.on("close", () => this.destroy());
    client.setTimeout(CLIENT_IDLE_MS, () => {
      if (!this.detached && !this.current) this.destroy();
    });
  }

  private readonly onClientData = (chunk: Buffer) => {
    this.held = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.pump();
  };

  private pump(): void {
    while (!this.detached) {
      const cur = this.current;
      if (cur?.request) {
        if (!this.held.length) return;
        const n = cur.request.feed(this.held);
        if (n < 0) return this.destroy();
        this.send(cur, this.held.subarray(0, n));
        this.held = this.held.subarray(n);
        if (!cur.request.done) return;
        cur.request = null;
        continue;
      }
      if (cur) {
        if (this.held.length > MAX_HELD) this.client.pause();
        return;
      }
      if (!this.held.length) return;
      const head = readHead(this.held);
      if (head === null) return;
      if (head === "bad") return this.becomePipe(this.pick("", "/"));
      const framing = requestFraming(head);
      const [method, target] = head.startLine as [string, string];
      if (framing === "bad" || head.headers.has("upgrade")) return this.becomePipe(this.pick(method, target));
      if (this.takeover && framing.kind === "none" && this.held.length === head.length) {
        const bytes = this.held;
        this.detach();
        this.client.setTimeout(0);
        if (this.takeover(this.client, head, bytes)) return this.detachAll();
        this.client.setTimeout(CLIENT_IDLE_MS);
        this.reattach();
      }
      const backend = this.backend(this.pick(method, target));
      const next: InFlight = {
        backend,
        method,
        request: framing.kind === "none" ? null : new BodyCounter(framing),
        sent: [],
        sentBytes: 0,
        reused: backend.served > 0,
        retried: false,
        answered: false,
        head: Buffer.alloc(0),
        response: null,
        closeAfter: closes(head, head.startLine[2]),
      };
      this.current = next;
      this.send(next, this.held.subarray(0, head.length));
      this.held = this.held.subarray(head.length);
    }
  }

  private send(cur: InFlight, bytes: Buffer): void {
    if (!bytes.length) return;
    if (cur.sent) {
      cur.sentBytes += bytes.length;
      if (cur.sentBytes > RETRY_MAX) cur.sent = null;
      else cur.sent.push(Buffer.from(bytes));
    }
    const socket = cur.backend.socket;
    if (!socket.write(bytes)) {
      this.client.pause();
      socket.once("drain", () => this.client.resume());
    }
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
    if (!this.client.write(chunk)) {
      backend.socket.pause();
      this.client.once("drain", () => backend.socket.resume());
    }
    this.scanResponse(cur, chunk);
  }

  private scanResponse(cur: InFlight, chunk: Buffer): void {
    let bytes = chunk;
    while (bytes.length && !this.detached) {
      if (!cur.response) {
        cur.head = cur.head.length ? Buffer.concat([cur.head, bytes]) : bytes;
        const head = readHead(cur.head);
        if (head === null) return;
        if (head === "bad") return this.destroy();
        bytes = cur.head.subarray(head.length);
        cur.head = Buffer.alloc(0);
        const status = Number(head.startLine[1]);
        // An event stream lasts as long as its reader: the connection is its, so it becomes
        // a plain pipe rather than have every frame scanned (a thousand followers, a hundred
        // frames a second each). Should the stream end, what the client sends next on that
        // connection goes to this process, which answers any route.
        if (status === 101 || (status === 200 && head.headers.get("content-type")?.startsWith("text/event-stream"))) return this.becomeTunnel(cur.backend);
        if (status >= 100 && status < 200) continue;
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
    // Answered before its body was all sent (a 413, say): the rest of the body cannot be told from a next request.
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
    else if (!cur.answered) this.end(BAD_GATEWAY);
    else this.destroy();
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

  /** Ends the client's connection after what was written (plus `last`), and lets it close. */
  private end(last?: Buffer): void {
    this.detachAll();
    if (last) this.client.end(last);
    else this.client.end();
    this.client.resume();
    setTimeout(() => this.client.destroy(), LINGER_MS).unref();
  }

  /** From here on, the connection is bytes to and from one process. */
  private becomePipe(up: Upstream): void {
    for (const b of this.backends.values()) b.socket.destroy();
    this.backends.clear();
    const backend = connect({ host: up.host, port: up.port, noDelay: true });
    this.tunnel(backend);
  }

  private becomeTunnel(backend: Backend): void {
    this.backends.delete(backend.key);
    for (const b of this.backends.values()) b.socket.destroy();
    this.backends.clear();
    backend.socket.removeAllListeners("data");
    this.tunnel(backend.socket);
  }

  private tunnel(backend: Socket): void {
    this.detach();
    this.client.setTimeout(0);
    this.current = null;
    const close = () => {
      this.client.destroy();
      backend.destroy();
    };
    this.client.on("error", close).on("close", close);
    backend.on("error", close).on("close", close);
    if (this.held.length) backend.write(this.held);
    this.held = Buffer.alloc(0);
    this.client.pipe(backend);
    backend.pipe(this.client);
    this.client.resume();
  }

  private detach(): void {
    this.detached = true;
    this.client.off("data", this.onClientData);
    this.client.pause();
  }

  private reattach(): void {
    this.detached = false;
    this.client.on("data", this.onClientData);
    this.client.resume();
  }

  private detachAll(): void {
    this.detached = true;
    this.client.off("data", this.onClientData);
    for (const b of this.backends.values()) b.socket.destroy();
    this.backends.clear();
  }

  private destroy(): void {
    this.detachAll();
    this.client.destroy();
  }
}
