/**
 * Just enough HTTP/1.1 framing for the front to tell where one message ends and the next
 * begins, without parsing or copying what it forwards: heads are read whole (they are
 * small), bodies are only counted.
 */

/** A head larger than this is not parsed; the connection falls back to a plain pipe. */
export const MAX_HEAD = 64 * 1024;

export interface Head {
  /** Bytes of the head, the blank line included. */
  length: number;
  /** Request: method and target. Response: status. */
  startLine: string[];
  headers: Map<string, string>;
}

/** The head at the start of `buf`: null while incomplete, "bad" when it cannot be a head. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function readHead(buf: Buffer): Head | null | "bad" {
  const end = buf.indexOf("\r\n\r\n");
  // Lines ended by a bare LF are legal to some parsers and not to others: not ours to decide.
  if (end < 0) return buf.length > MAX_HEAD || buf.indexOf("\n\n") >= 0 ? "bad" : null;
  if (end > MAX_HEAD) return "bad";
  const lines = buf.toString("latin1", 0, end).split("\r\n");
  const startLine = lines[0]!.split(" ");
  if (startLine.length < 2) return "bad";
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) return "bad";
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    // Two lengths, or a length beside chunking, are how requests are smuggled: not ours to decide.
    if ((name === "content-length" || name === "transfer-encoding") && headers.has(name)) return "bad";
    headers.set(name, value);
  }
  return { length: end + 4, startLine, headers };
}

/** How a message's body is delimited. */
export type Framing = { kind: "length"; remaining: number } | { kind: "chunked" } | { kind: "close" } | { kind: "none" };

/** A request's body: a length, chunks, or nothing; "bad" for anything else. */
export function requestFraming(head: Head): Framing | "bad" {
  const te = head.headers.get("transfer-encoding");
  const cl = head.headers.get("content-length");
  if (te !== undefined) return te.toLowerCase() === "chunked" && cl === undefined ? { kind: "chunked" } : "bad";
  if (cl === undefined) return { kind: "none" };
  if (!/^\d{1,15}$/.test(cl)) return "bad";
  const n = Number(cl);
  return n === 0 ? { kind: "none" } : { kind: "length", remaining: n };
}

/** A response's body, given the request's method (RFC 9112 section 6.3). */
export function responseFraming(head: Head, method: string): Framing | "bad" {
  const status = Number(head.startLine[1]);
  if (!Number.isInteger(status)) return "bad";
  if (method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200)) return { kind: "none" };
  const te = head.headers.get("transfer-encoding");
  if (te !== undefined) return te.toLowerCase().endsWith("chunked") ? { kind: "chunked" } : { kind: "close" };
  const cl = head.headers.get("content-length");
  if (cl === undefined) return { kind: "close" };
  if (!/^\d{1,15}$/.test(cl)) return "bad";
  const n = Number(cl);
  return n === 0 ? { kind: "none" } : { kind: "length", remaining: n };
}

/**
 * Walks a chunked body as its bytes go by: `feed` returns how many bytes of `chunk`
 * belong to the body (all of them until the last chunk and its trailers are seen), or
 * -1 when the framing is broken.
 */
export class ChunkedScanner {
  private state: "size" | "data" | "data-crlf" | "trailer" = "size";
  private line = "";
  private remaining = 0;
  done = false;

  feed(chunk: Buffer, from = 0): number {
    let i = from;
    while (i < chunk.length && !this.done) {
      if (this.state === "data") {
        const take = Math.min(this.remaining, chunk.length - i);
        i += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = "data-crlf";
        continue;
      }
      const nl = chunk.indexOf(10, i);
      const end = nl < 0 ? chunk.length : nl + 1;
      this.line += chunk.toString("latin1", i, end);
      i = end;
      if (nl < 0) {
        if (this.line.length > 4096) return -1;
        continue;
      }
      const line = this.line.replace(/\r?\n$/, "");
      this.line = "";
      if (this.state === "data-crlf") {
        if (line !== "") return -1;
        this.state = "size";
      } else if (this.state === "size") {
        const size = parseInt(line.split(";")[0]!.trim(), 16);
        if (!Number.isFinite(size) || size < 0 || !/^[0-9a-fA-F]+/.test(line)) return -1;
        if (size === 0) this.state = "trailer";
        else {
          this.remaining = size;
          this.state = "data";
        }
      } else if (line === "") this.done = true;
    }
    return i - from;
  }
}

/** Counts a body through, whatever its framing. */
export class BodyCounter {
  private readonly chunked: ChunkedScanner | null;
  private remaining: number;
  readonly untilClose: boolean;

  constructor(framing: Framing) {
    this.chunked = framing.kind === "chunked" ? new ChunkedScanner() : null;
    this.remaining = framing.kind === "length" ? framing.remaining : 0;
    this.untilClose = framing.kind === "close";
  }

  get done(): boolean {
    if (this.untilClose) return false;
    return this.chunked ? this.chunked.done : this.remaining === 0;
  }

  /** How many bytes of `chunk` from `from` are body; -1 when the framing is broken. */
  feed(chunk: Buffer, from = 0): number {
    if (this.untilClose) return chunk.length - from;
    if (this.chunked) return this.chunked.feed(chunk, from);
    const take = Math.min(this.remaining, chunk.length - from);
    this.remaining -= take;
    return take;
  }
}
