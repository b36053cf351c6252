/**
 * A child process holding N `follow` connections to one thread. Each event's text is
 * the wall-clock time it was posted; each delivery's latency is measured against it,
 * when the event's bytes are read from the follower's socket.
 *
 * It shares the machine's two CPUs with what it measures and reads a socket per follower
 * per event, so it reads as cheaply as Node can: plain sockets (no HTTP client, no string
 * decoding), bytes scanned, latencies counted in a histogram of 0.1 ms buckets rather
 * than kept. It reports its own CPU time, so the bench's rows show what it took.
 */
import { connect } from "node:net";

interface Start {
  url: string;
  threadId: string;
  after: number;
  count: number;
}

const TEXT = Buffer.from('"text":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const FRAME_END = Buffer.from("\n\n");
const EMPTY: Buffer = Buffer.alloc(0);
const READ_BUFFER = Buffer.alloc(1 << 16);
const BUCKET_MS = 0.1;
/** Up to a minute; a later delivery counts in the last bucket. */
const histogram = new Uint32Array(600_000);
const origin = performance.timeOrigin;
const now = () => origin + performance.now();
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
let deliveries = 0;
let measuring = true;

/** Where `"text":"` starts in `buf` at or after `from`; -1 when it does not. A loop over the bytes, cheaper than a native call for a frame's few hundred. */
function findText(buf: Buffer, from: number): number {
  const last = buf.length - TEXT.length;
  outer: for (let i = from; i <= last; i++) {
    if (buf[i] !== QUOTE) continue;
    for (let k = 1; k < TEXT.length; k++) if (buf[i + k] !== TEXT[k]) continue outer;
    return i;
  }
  return -1;
}

/** Counts each event's text in the body, keeping the unfinished frame for the next read. */
function scanner(): (data: Buffer) => void {
  let pending = EMPTY;
  return (data) => {
    const buf = pending.length ? Buffer.concat([pending, data]) : data;
    let at = 0;
    for (;;) {
      const start = findText(buf, at);
      if (start < 0) break;
      let end = start + TEXT.length;
      while (end < buf.length && buf[end] !== QUOTE) end++;
      if (end === buf.length) break;
      if (measuring) {
        const ms = now() - Number(buf.toString("latin1", start + TEXT.length, end));
        histogram[Math.min(histogram.length - 1, Math.max(0, Math.floor(ms / BUCKET_MS)))]!++;
        deliveries++;
      }
      at = end;
    }
    // What follows the last whole frame, less a text already counted: nothing, when the read ended a frame.
    const n = buf.length;
    if (n >= 2 && buf[n - 1] === NEWLINE && buf[n - 2] === NEWLINE) pending = EMPTY;
    else {
      // A copy: the read's buffer is the next read's too.
      const cut = buf.lastIndexOf(FRAME_END);
      pending = Buffer.from(buf.subarray(Math.max(at, cut >= 0 ? cut + 2 : 0)));
    }
  };
}

/** Undoes `transfer-encoding: chunked` (workerd's own streams, with the relay off). */
function dechunker(next: (data: Buffer) => void): (data: Buffer) => void {
  let pending = EMPTY;
  /** Data bytes left in the current chunk; 0 when a size line (or a chunk's CRLF) is next. */
  let left = 0;
  let crlf = 0;
  return (data) => {
    let buf = pending.length ? Buffer.concat([pending, data]) : data;
    pending = EMPTY;
    while (buf.length) {
      if (left > 0) {
        const take = Math.min(left, buf.length);
        next(buf.subarray(0, take));
        buf = buf.subarray(take);
        left -= take;
        if (left === 0) crlf = 2;
      } else if (crlf > 0) {
        const skip = Math.min(crlf, buf.length);
        buf = buf.subarray(skip);
        crlf -= skip;
      } else {
        const eol = buf.indexOf(CRLF);
        if (eol < 0) return void (pending = Buffer.from(buf));
        left = parseInt(buf.toString("latin1", 0, eol), 16);
        buf = buf.subarray(eol + 2);
        if (left === 0) return;
      }
    }
  };
}

function follow(url: string, threadId: string, after: number): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let head: Buffer | null = EMPTY;
    let body: (data: Buffer) => void = () => {};
    const onData = (data: Buffer) => {
      if (!head) return body(data);
      head = Buffer.concat([head, data]);
      const end = head.indexOf(HEAD_END);
      if (end < 0) return;
      const text = head.toString("latin1", 0, end);
      const rest = head.subarray(end + HEAD_END.length);
      head = null;
      const status = /^HTTP\/1\.1 (\d+)/.exec(text)?.[1];
      if (status !== "200") return reject(new Error(`follow answered ${status}`));
      body = /^transfer-encoding:\s*chunked\s*$/im.test(text) ? dechunker(scanner()) : scanner();
      resolve();
      if (rest.length) body(rest);
    };
    // Reads land in one buffer shared by every socket, handed over without a stream between.
    const socket = connect({ host: hostname, port: Number(port), onread: { buffer: READ_BUFFER, callback: (n: number) => (onData(READ_BUFFER.subarray(0, n)), true) } });
    socket.write(`GET /threads/${threadId}/follow?after=${after} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n\r\n`);
    socket.on("error", reject);
  });
}

/** The bucket's upper edge: a latency is at most this. */
function percentile(p: number): number {
  const rank = Math.min(deliveries - 1, Math.floor((p / 100) * deliveries));
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen > rank) return (i + 1) * BUCKET_MS;
  }
  return NaN;
}

let cpuAtReady = 0;
process.on("message", async (msg: { start?: Start; report?: true }) => {
  if (msg.start) {
    const { url, threadId, after, count } = msg.start;
    const t = now();
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => follow(url, threadId, after)));
    }
    cpuAtReady = cpuMs();
    process.send!({ ready: true, connectMs: now() - t });
  }
  if (msg.report) {
    measuring = false;
    process.send!({ deliveries, p50: percentile(50), p99: percentile(99), cpuMs: cpuMs() - cpuAtReady, memory: process.memoryUsage().rss });
    setTimeout(() => process.exit(0), 50);
  }
});
