import { CODES } from "../../src/api/errors.js";

/**
 * Just enough HTTP/1.1 for the front to tell where one message ends and the next begins,
 * and to refuse, before workerd sees a byte of it, any request whose framing two parsers
 * could read two ways (the request-smuggling cases) or that workerd would answer in plain
 * text. Heads are read whole (they are small); bodies are counted, and chunked request
 * bodies re-framed as they go (see ChunkedBody).
 */

/** Largest head the front reads; a longer one is refused with 431 before it is parsed. */
export const MAX_HEAD = 64 * 1024;

/** The methods this API's routes use: anything else is answered 501 by the front. */
export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const KNOWN_METHODS: ReadonlySet<string> = new Set(METHODS);

export interface Head {
  /** Bytes of the head, the blank line included. */
  length: number;
  /** Request: method, target, version. Response: version, status, reason words. */
  startLine: string[];
  headers: Map<string, string>;
}

/** Why the front answers a request itself: status, code and one sentence, then it closes. */
export interface Refusal {
  status: 400 | 408 | 431 | 501;
  code: string;
  error: string;
}

const bad = (error: string): Refusal => ({ status: 400, code: CODES.badRequestFraming, error });

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Control characters other than HTAB, which a field value may hold. */
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers a message may carry once: two of them are read differently by different parsers. */
const SINGLE = new Set(["content-length", "transfer-encoding", "host"]);

/**
 * The head at the start of `buf`: null while incomplete, a refusal when it cannot be a
 * head. `scanned`: bytes of `buf` an earlier call already looked at and found incomplete,
 * so a head that trickles in is not scanned again from its start each time.
 */
export function readHead(buf: Buffer, scanned = 0): Head | null | Refusal {
  const end = buf.indexOf("\r\n\r\n", Math.max(0, scanned - 3));
  const upTo = end < 0 ? buf.length : end;
  // A line ended by a bare LF ends it for some parsers and not for others.
  for (let nl = buf.indexOf(10, Math.max(0, scanned - 1)); nl >= 0 && nl < upTo; nl = buf.indexOf(10, nl + 1))
    if (nl === 0 || buf[nl - 1] !== 13) return bad("lines must end with CRLF, not a bare LF");
  if (upTo > MAX_HEAD) return { status: 431, code: CODES.headTooLarge, error: `the request head is larger than ${MAX_HEAD} bytes` };
  if (end < 0) return null;
  const lines = buf.toString("latin1", 0, end).split("\r\n");
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) return bad("a header line is not `name: value` (a name is a token, with no space before the colon, and lines are not folded)");
    if (CTL.test(line)) return bad("a header value holds a control character");
    const name = line.slice(0, colon).toLowerCase();
    if (SINGLE.has(name) && headers.has(name)) return bad(`the ${name} header appears more than once`);
    headers.set(name, line.slice(colon + 1).trim());
  }
  if (CTL.test(lines[0]!)) return bad("the start line holds a control character");
  return { length: end + 4, startLine: lines[0]!.split(" "), headers };
}

/** How a message's body is delimited. */
export type Framing = { kind: "length"; remaining: number } | { kind: "chunked" } | { kind: "close" } | { kind: "none" };

/** A request the front will forward: what routing, logging and the connection need of it. */
export interface RequestHead {
  method: string;
  target: string;
  framing: Framing;
  /** The connection ends after this request's answer. */
  closes: boolean;
}

/** `host` or `host:port`, a name or an IP literal: anything else could change the URL workerd builds from it. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::\d{1,5})?$/;
/** A path segment that is `.` or `..`, written out or percent-encoded: URL parsing would remove it and what precedes it. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;
/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
/** An encoded `/` or `\`: a segment that decodes to a separator means one thing to a router and another to whatever it is passed to. */
const ENCODED_SEPARATOR = /%2f|%5c/i;

/** Whether a Connection header lists `token`. */
export function lists(value: string | undefined, token: string): boolean {
  return value !== undefined && value.split(",").some((t) => t.trim().toLowerCase() === token);
}

/** After this message the connection closes: it says so, or it is HTTP/1.0 without keep-alive. */
export function closes(head: Head, version: string | undefined): boolean {
  const connection = head.headers.get("connection");
  return lists(connection, "close") || (version === "HTTP/1.0" && !lists(connection, "keep-alive"));
}

/**
 * A request head the front forwards, or why it answers the request itself. Upgrade
 * headers are left as they are: no route upgrades, so workerd answers such a request as
 * an ordinary one (RFC 9110 lets a server ignore Upgrade), which keeps `curl --http2`
 * and its h2c offer working.
 */
export function readRequest(head: Head): RequestHead | Refusal {
  const parts = head.startLine;
  if (parts.length !== 3) return bad("the request line must be `METHOD SP target SP HTTP/1.1`, with single spaces");
  const [method, target, version] = parts as [string, string, string];
  if (!TOKEN.test(method)) return bad("the method is not a token");
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0") return bad(`the version must be HTTP/1.1 or HTTP/1.0, not ${JSON.stringify(version.slice(0, 16))}`);
  if (method === "CONNECT") return bad("CONNECT is not served: the runtime is not a proxy");
  const refused = checkTarget(target);
  if (refused) return refused;
  const hosts = head.headers.get("host");
  if (hosts === undefined) return bad("a Host header is required");
  if (!HOST.test(hosts)) return bad("the Host header must be a host name or IP literal, with an optional port");
  const framing = requestFraming(head, version);
  if ("status" in framing) return framing;
  if (!KNOWN_METHODS.has(method)) {
    const upper = method.toUpperCase();
    const hint = KNOWN_METHODS.has(upper) ? ` (methods are case-sensitive: ${upper})` : "";
    return { status: 501, code: CODES.methodNotImplemented, error: `${method.slice(0, 32)} is not a method this API uses${hint}; it uses ${METHODS.join(", ")}` };
  }
  return { method, target, framing, closes: closes(head, version) };
}

/** Only a path (origin-form) without dot segments, encoded separators or broken escapes. */
function checkTarget(target: string): Refusal | null {
  if (target === "*") return bad("an asterisk target (*) is not served: send the request to a path");
  if (target[0] !== "/") return bad("the target must be a path starting with / (absolute-form and authority-form targets are refused)");
  if (!/^[\x21-\x7e]+$/.test(target)) return bad("the target holds a character that must be percent-encoded");
  if (target.includes("#")) return bad("the target may not hold a fragment (#)");
  const query = target.indexOf("?");
  const path = query < 0 ? target : target.slice(0, query);
  if (path.includes("\\")) return bad("the path may not hold a backslash");
  if (BAD_ESCAPE.test(path)) return bad("the path holds a % that is not followed by two hex digits");
  if (ENCODED_SEPARATOR.test(path)) return bad("the path may not hold an encoded / or \\ (%2F, %5C)");
  if (DOT_SEGMENT.test(path)) return bad("the path may not hold . or .. segments, written or percent-encoded");
  return null;
}

/** A request's body: a length, chunks, or nothing. */
function requestFraming(head: Head, version: string): Framing | Refusal {
  const te = head.headers.get("transfer-encoding");
  const cl = head.headers.get("content-length");
  if (te !== undefined) {
    if (cl !== undefined) return bad("a request may not carry both Transfer-Encoding and Content-Length");
    if (version === "HTTP/1.0") return bad("an HTTP/1.0 request may not carry Transfer-Encoding");
    if (te.toLowerCase() !== "chunked") return bad("Transfer-Encoding must be exactly `chunked`");
    return { kind: "chunked" };
  }
  if (cl === undefined) return { kind: "none" };
  if (!/^\d{1,15}$/.test(cl)) return bad("Content-Length must be decimal digits");
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

const REASONS: Record<Refusal["status"], string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
};

/**
 * The whole answer to a refused request: JSON, and the connection closes after it. The
 * answer to a HEAD carries the body's length and not the body (RFC 9110 9.3.2): a client
 * reads no body after it, and the bytes would be taken for another answer.
 */
export function refusalBytes(r: Refusal, method: string | undefined): Buffer {
  const body = JSON.stringify({ error: r.error, code: r.code });
  const allow = r.status === 501 ? `allow: ${METHODS.join(", ")}\r\n` : "";
  return jsonAnswer(`${r.status} ${REASONS[r.status]}`, body, allow, method);
}

/** A JSON answer of the front's own, closing the connection; its body left out for a HEAD. */
export function jsonAnswer(statusLine: string, body: string, extraHeaders: string, method: string | undefined): Buffer {
  return Buffer.from(
    `HTTP/1.1 ${statusLine}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extraHeaders}connection: close\r\n\r\n${method === "HEAD" ? "" : body}`,
    "latin1",
  );
}

/** A request body on its way to workerd. */
export interface RequestBody {
  readonly done: boolean;
  /**
   * Takes the body's bytes from the start of `chunk` and pushes onto `out` what to send
   * on for them; returns how many bytes of `chunk` were body, or why the body is refused.
   */
  forward(chunk: Buffer, out: Buffer[]): number | Refusal;
}

export function requestBody(framing: Framing): RequestBody | null {
  if (framing.kind === "length") return new LengthBody(framing.remaining);
  if (framing.kind === "chunked") return new ChunkedBody();
  return null;
}

/** A body of declared length goes on as it came: no copy, no look at its bytes. */
class LengthBody implements RequestBody {
  constructor(private remaining: number) {}

  get done(): boolean {
    return this.remaining === 0;
  }

  forward(chunk: Buffer, out: Buffer[]): number {
    const take = Math.min(this.remaining, chunk.length);
    this.remaining -= take;
    out.push(take === chunk.length ? chunk : chunk.subarray(0, take));
    return take;
  }
}

/** Longest chunk-size line (size and extensions) or trailer section the front reads. */
const MAX_CHUNK_LINE = 4096;
const CRLF = Buffer.from("\r\n");
const LAST_CHUNK = Buffer.from("0\r\n\r\n");
/** A chunk size: hex digits, then optional extensions. */
const CHUNK_SIZE = /^([0-9A-Fa-f]+)[ \t]*(?:;.*)?$/;

/**
 * A chunked request body, strictly parsed and re-framed as it goes: each chunk's data goes
 * on untouched, behind a size line the front writes itself, without extensions; the
 * trailer section is dropped. workerd (kj's HTTP parser) answers a chunk extension
 * (`5;ext=1`), which HTTP/1.1 allows, with 500 "invalid HTTP chunk size", and no route
 * reads trailers.
 */
class ChunkedBody implements RequestBody {
  private state: "size" | "data" | "data-cr" | "data-lf" | "trailer" | "done" = "size";
  /** The partial size or trailer line, across reads. */
  private line = "";
  private trailerBytes = 0;
  private remaining = 0;

  get done(): boolean {
    return this.state === "done";
  }

  forward(chunk: Buffer, out: Buffer[]): number | Refusal {
    let i = 0;
    while (i < chunk.length && this.state !== "done") {
      if (this.state === "data") {
        const take = Math.min(this.remaining, chunk.length - i);
        out.push(chunk.subarray(i, i + take));
        i += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = "data-cr";
        continue;
      }
      if (this.state === "data-cr" || this.state === "data-lf") {
        if (chunk[i] !== (this.state === "data-cr" ? 13 : 10)) return bad("a chunk's data must be followed by CRLF");
        i++;
        if (this.state === "data-lf") {
          out.push(CRLF);
          this.state = "size";
        } else this.state = "data-lf";
        continue;
      }
      const nl = chunk.indexOf(10, i);
      const end = nl < 0 ? chunk.length : nl + 1;
      this.line += chunk.toString("latin1", i, end);
      if (this.state === "trailer") this.trailerBytes += end - i;
      i = end;
      if (this.line.length > MAX_CHUNK_LINE || this.trailerBytes > MAX_HEAD) return bad("a chunk-size line or the trailer section is too long");
      if (nl < 0) continue;
      if (!this.line.endsWith("\r\n")) return bad("lines of a chunked body must end with CRLF, not a bare LF");
      const line = this.line.slice(0, -2);
      this.line = "";
      if (this.state === "trailer") {
        if (line === "") {
          out.push(LAST_CHUNK);
          this.state = "done";
        }
        continue;
      }
      const refused = this.size(line, out);
      if (refused) return refused;
    }
    return i;
  }

  private size(line: string, out: Buffer[]): Refusal | null {
    const m = CHUNK_SIZE.exec(line);
    if (!m) return bad("a chunk size must be hex digits");
    const digits = m[1]!.replace(/^0+(?=.)/, "");
    // 13 hex digits stay below 2^53: a longer size cannot be counted exactly (and no body is that large).
    if (digits.length > 13) return bad("a chunk size is too large");
    const size = parseInt(digits, 16);
    if (size === 0) this.state = "trailer";
    else {
      out.push(Buffer.from(`${digits}\r\n`, "latin1"));
      this.remaining = size;
      this.state = "data";
    }
    return null;
  }
}

/** Counts a response body through, whatever its framing; the bytes go on as they are. */
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

/**
 * Walks a chunked response body (workerd's, so well-formed) as its bytes go by: `feed`
 * returns how many bytes of `chunk` belong to the body (all of them until the last chunk
 * and its trailers are seen), or -1 when the framing is broken.
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
        if (this.line.length > MAX_CHUNK_LINE) return -1;
        continue;
      }
      const line = this.line.replace(/\r?\n$/, "");
      this.line = "";
      if (this.state === "data-crlf") {
        if (line !== "") return -1;
        this.state = "size";
      } else if (this.state === "size") {
        const m = CHUNK_SIZE.exec(line);
        if (!m || m[1]!.replace(/^0+(?=.)/, "").length > 13) return -1;
        const size = parseInt(m[1]!, 16);
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

/** A response head (status line to the blank line) saying the connection closes after it, whatever it said before. */
export function closingHead(head: Buffer): Buffer {
  const lines = head.toString("latin1").split("\r\n").slice(0, -2);
  const kept = lines.filter((line, i) => i === 0 || !/^connection\s*:/i.test(line));
  return Buffer.from([...kept, "connection: close", "", ""].join("\r\n"), "latin1");
}
