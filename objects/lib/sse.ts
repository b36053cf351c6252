import { HEARTBEAT_COMMENT } from "../../src/api/sse.js";

export { RETRY_HINT, SSE_HEADERS } from "../../src/api/sse.js";

export const encoder = new TextEncoder();

/** A durable entry serialized: a thread's event, or a workspace feed's entry. */
export interface Frame {
  seq: number;
  json: string;
}

/** One durable entry as an SSE frame: the id is the seq, so `Last-Event-ID` resumes. */
export function eventFrame(event: Frame): string {
  return `id: ${event.seq}\ndata: ${event.json}\n\n`;
}

export const HEARTBEAT = encoder.encode(HEARTBEAT_COMMENT);

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
