import type { SerializedEvent } from "./event-log.js";

export const encoder = new TextEncoder();

/** SPEC "Streaming rules" 2: intermediaries must neither cache nor buffer the stream. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

/** One durable event as an SSE frame: the id is the seq, so `Last-Event-ID` resumes. */
export function eventFrame(event: SerializedEvent): string {
  return `id: ${event.seq}\ndata: ${event.json}\n\n`;
}

export const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/** Tells EventSource clients how long to wait before reconnecting. */
export const RETRY_HINT = "retry: 2000\n\n";

export function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
