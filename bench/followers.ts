/**
 * A child process holding N `follow` connections to one thread. Each event's text is
 * the wall-clock time it was posted; each delivery's latency is measured against it.
 * Frames are scanned, not JSON-parsed, so this process costs as little CPU as it can
 * while sharing the machine with the runtime.
 */
import { request } from "node:http";

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

function follow(url: string, threadId: string, after: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/threads/${threadId}/follow?after=${after}`, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`follow answered ${res.statusCode}`));
      res.setEncoding("utf8");
      let buffer = "";
      let ready = false;
      res.on("data", (chunk: string) => {
        if (!ready) ((ready = true), resolve());
        buffer += chunk;
        let at = 0;
        for (;;) {
          const start = buffer.indexOf('"text":"', at);
          if (start < 0) break;
          const end = buffer.indexOf('"', start + 8);
          if (end < 0) break;
          if (measuring) {
            latencies.push(now() - Number(buffer.slice(start + 8, end)));
            deliveries++;
          }
          at = end;
        }
        const cut = buffer.lastIndexOf("\n\n");
        if (cut >= 0) buffer = buffer.slice(cut + 2);
      });
      res.on("error", () => {});
    });
    req.on("error", reject);
    req.end();
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
