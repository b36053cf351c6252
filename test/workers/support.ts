import { env } from "cloudflare:test";
import type { ThreadSpec } from "../../src/api/threads.js";
import { newThreadId } from "../../src/shared/ids.js";

export const SPEC: ThreadSpec = {
  workspace: null,
  title: "t",
  role: "chat",
  type: "chat",
  engine: "pi",
  model: "sim-1",
  permissions: "ask",
  cwd: null,
  account: null,
  proxyEnv: null,
  fallback: null,
  approvalTimeoutMs: null,
  questionTimeoutMs: null,
  onBusy: "queue",
};

export function stubOf(id: string) {
  return env.THREAD.get(env.THREAD.idFromName(id));
}

export async function newThread(spec: Partial<ThreadSpec> = {}) {
  const id = newThreadId();
  const stub = stubOf(id);
  value(await stub.init(id, { ...SPEC, ...spec }));
  return { id, stub };
}

/** Opens `follow` or `stream` the way the router does: over the object's fetch. */
export async function sse(stub: ReturnType<typeof stubOf>, path: string): Promise<{ status: number; body: ReadableStream<Uint8Array> | null; json?: any }> {
  const res = await stub.fetch(`https://thread${path}`);
  if (res.status !== 200) return { status: res.status, body: null, json: await res.json() };
  return { status: 200, body: res.body };
}

export function value<T>(outcome: { ok: true; value: T } | { ok: false; status: number; body: unknown }): T {
  if (!outcome.ok) throw new Error(`refused ${outcome.status}: ${JSON.stringify(outcome.body)}`);
  return outcome.value;
}

/** Reads SSE frames from a stream until `until` says stop; returns the frames' raw text blocks. */
export async function readFrames(stream: ReadableStream<Uint8Array>, until: (frames: string[]) => boolean, timeoutMs = 5000): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const frames: string[] = [];
  let buffer = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (!until(frames)) {
      if (Date.now() > deadline) throw new Error(`timed out with frames: ${JSON.stringify(frames)}`);
      const { value: chunk, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        frames.push(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return frames;
}

export function dataFrames(frames: string[]): { id: number; data: { seq: number; kind: string; body: any } }[] {
  return frames
    .filter((f) => f.startsWith("id: "))
    .map((f) => {
      const [idLine, dataLine] = f.split("\n");
      return { id: Number(idLine!.slice(4)), data: JSON.parse(dataLine!.slice(6)) };
    });
}

/**
 * Opens six followers a moment apart while `writes` are being committed, and answers the
 * ids each one saw up to `lastId`: a race between catching up and going live shows as
 * an id missing or repeated.
 */
export async function idsSeenWhileWriting(open: () => Promise<ReadableStream<Uint8Array>>, writes: Promise<unknown>[], lastId: number): Promise<number[][]> {
  const streams = [];
  for (let k = 0; k < 6; k++) {
    streams.push(await open());
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(writes);
  const seen = [];
  for (const stream of streams) seen.push(dataFrames(await readFrames(stream, (f) => dataFrames(f).some((x) => x.id === lastId))).map((f) => f.id));
  return seen;
}
