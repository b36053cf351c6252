/**
 * A child process holding N `follow` connections to one thread. Each event's text is
 * the wall-clock time it was posted; each delivery's latency is measured against it.
 * It shares two CPUs with the runtime, so it costs as little as it can: raw sockets (no
 * HTTP client stream per follower), bytes scanned for the text, never decoded or parsed.
 * The status line is checked; past the head, a chunked answer's size lines fall between
 * frames (workerd writes whole frames per chunk), so the scan reads both framings.
 */
import { connect } from "node:net";

interface Start {
  url: string;
  threadId: string;
  after: number;
  count: number;
}

const now = () => performance.timeOrigin + performance.now();
const latencies: number[] = [];
let deliveries = 0;
let measuring = true;
const TEXT = Buffer.from('"text":"');
const QUOTE = 0x22;
const OK = "HTTP/1.1 200 ";

function follow(url: string, threadId: string, after: number): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    socket.write(`GET /threads/${threadId}/follow?after=${after} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n\r\n`);
    let rest: Buffer | null = null;
    let ready = false;
    socket.on("data", (chunk: Buffer) => {
      let buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
      if (!ready) {
        if (buffer.length < OK.length) return void (rest = buffer);
        if (buffer.toString("latin1", 0, OK.length) !== OK) return reject(new Error(`follow answered ${buffer.toString("latin1", 0, 40)}`));
        ready = true;
        resolve();
      }
      let at = 0;
      let done = 0;
      for (;;) {
        const start = buffer.indexOf(TEXT, at);
        if (start < 0) break;
        const end = buffer.indexOf(QUOTE, start + TEXT.length);
        if (end < 0) break;
        if (measuring) {
          latencies.push(now() - Number(buffer.toString("latin1", start + TEXT.length, end)));
          deliveries++;
        }
        at = done = end + 1;
      }
      // What may hold the start of the next text: the unscanned tail, at most a frame's worth.
      const keep = Math.max(done, buffer.length - 4096);
      rest = keep < buffer.length ? buffer.subarray(keep) : null;
    });
    socket.on("error", (err) => (ready ? undefined : reject(err)));
  });
}

process.on("message", async (msg: { start?: Start; report?: true }) => {
  if (msg.start) {
    const { url, threadId, after, count } = msg.start;
    const t = now();
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => follow(url, threadId, after)));
    }
    process.send!({ ready: true, connectMs: now() - t });
  }
  if (msg.report) {
    measuring = false;
    latencies.sort((a, b) => a - b);
    const pick = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
    process.send!({ deliveries, p50: pick(50), p99: pick(99), memory: process.memoryUsage().rss });
    setTimeout(() => process.exit(0), 50);
  }
});
