import { connect, type Socket } from "node:net";
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
 * written into that moment is lost. A backend connection idle this long is not reused.
 */
const BACKEND_IDLE_MS = 4000;
/** Bytes of pipelined requests held while an earlier response is still coming. */
const MAX_HELD = 1 << 20;

interface Backend {
  key: string;
  socket: Socket;
  idleSince: number;
}

interface InFlight {
  backend: Backend;
  method: string;
  /** The request body still to forward; null once it all went. */
  request: BodyCounter | null;
  /** Response head bytes seen so far, until the head is whole. */
  head: Buffer;
  response: BodyCounter | null;
  closeAfter: boolean;
}

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
        this.send(cur.backend, this.held.subarray(0, n));
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
        if (this.takeover(this.client, head, bytes)) return this.detachAll();
        this.reattach();
      }
      const backend = this.backend(this.pick(method, target));
      this.current = {
        backend,
        method,
        request: framing.kind === "none" ? null : new BodyCounter(framing),
        head: Buffer.alloc(0),
        response: null,
        closeAfter: head.headers.get("connection")?.toLowerCase() === "close",
      };
      this.send(backend, this.held.subarray(0, head.length));
      this.held = this.held.subarray(head.length);
    }
  }

  private send(backend: Backend, bytes: Buffer): void {
    if (!bytes.length) return;
    if (!backend.socket.write(bytes)) {
      this.client.pause();
      backend.socket.once("drain", () => this.client.resume());
    }
  }

  private backend(up: Upstream): Backend {
    const key = `${up.host}:${up.port}`;
    const known = this.backends.get(key);
    if (known && !known.socket.destroyed && Date.now() - known.idleSince < BACKEND_IDLE_MS) return known;
    known?.socket.destroy();
    const socket = connect({ host: up.host, port: up.port, noDelay: true });
    const backend: Backend = { key, socket, idleSince: Date.now() };
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
        if (status === 101) return this.becomeTunnel(cur.backend);
        if (status >= 100 && status < 200) continue;
        const framing = responseFraming(head, cur.method);
        if (framing === "bad") return this.destroy();
        if (head.headers.get("connection")?.toLowerCase() === "close") cur.closeAfter = true;
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
    if (cur.closeAfter) {
      this.client.end();
      return this.detachAll();
    }
    this.client.resume();
    this.pump();
  }

  private onBackendGone(backend: Backend): void {
    if (this.backends.get(backend.key) === backend) this.backends.delete(backend.key);
    const cur = this.current;
    if (!cur || cur.backend !== backend || this.detached) return;
    this.current = null;
    // A body delimited by the close ends here; anything else was cut off.
    if (cur.response?.untilClose) {
      this.client.end();
      this.detachAll();
    } else this.destroy();
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
