import type { ZodType } from "zod";
import type { ErrorBody } from "../src/api/errors.js";
import { CONTRACT, type RouteKey } from "../src/api/contract.js";
import { RuntimeError, sleep, type StreamStatus } from "./transport.js";

/** One SSE frame with data: its `id` (null when it has none) and its `data`. */
export interface SseFrame {
  id: number | null;
  data: string;
}

/** The frames of an SSE body, in order; comments (heartbeats), retry hints and frames without data are skipped. */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const lines = buffer.slice(0, cut).split("\n");
      buffer = buffer.slice(cut + 2);
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      const id = lines.find((l) => l.startsWith("id: "));
      if (data) yield { id: id === undefined ? null : Number(id.slice(4)), data };
    }
  }
}

/**
 * A frame's `data` as JSON checked by the schema the route declares for it: anything else
 * is a `decode` failure. The frame is passed on as sent, fields the schema does not name
 * included, as `route` passes answers.
 */
export function frameData<T>(key: RouteKey, schema: ZodType | undefined, data: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new RuntimeError("decode", `${key} sent a frame that is not JSON: ${data.slice(0, 80)}`);
  }
  if (!schema) return parsed as T;
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new RuntimeError("decode", `${key} sent a frame that does not match its schema (${issue.path.join(".") || "the frame"}: ${issue.message})`);
  }
  return parsed as T;
}

/** The schema a stream route declares for its unnamed (`message`) frames. */
export function messageSchema(key: RouteKey): ZodType | undefined {
  return CONTRACT[key].events?.message?.data;
}

/** A refusal of a stream route, read from its JSON body: `rejected` with its code. */
async function refusal(path: string, res: Response): Promise<RuntimeError> {
  const err = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
  return new RuntimeError("rejected", err.error ?? `GET ${path}: ${res.status}`, res.status, err.code, err as ErrorBody);
}

export interface FollowOptions {
  signal?: AbortSignal;
  onStatus?: (s: StreamStatus) => void;
}

/** A push route a client follows, and what it makes of each frame. */
export interface Followed<T> {
  /** The route's path (its cursor goes in `Last-Event-ID`). */
  path: string;
  /** The seq to read after. */
  after: number;
  /** A connection is live; `resumed` when it follows one that was lost. */
  connected?(resumed: boolean): void;
  /** What the caller is yielded for a frame (nothing, or several). */
  items(frame: SseFrame): Iterable<T>;
  /** What is yielded instead when the runtime has no push route; without it the iteration ends. */
  fallback?(cursor: number): AsyncIterable<T>;
}

/**
 * A push route followed for as long as the caller iterates (SPEC "Client conventions"):
 * each connection sends the last seq seen in `Last-Event-ID`, a lost one is retried
 * after `pollMs`, doubling up to 30 s. `onStatus` hears live/lost/unsupported/gone: a
 * 404 without a code is a runtime without the route, one with `thread-not-found` a
 * thread that does not exist; both end the connections.
 */
export async function* followSse<T>(transport: { baseUrl: string; pollMs: number }, followed: Followed<T>, options: FollowOptions): AsyncGenerator<T> {
  let cursor = followed.after;
  let delay = transport.pollMs;
  let lost = false;
  while (!options.signal?.aborted) {
    let res: Response;
    try {
      res = await fetch(transport.baseUrl + followed.path, {
        headers: { accept: "text/event-stream", "last-event-id": String(cursor) },
        signal: options.signal,
      });
    } catch {
      if (options.signal?.aborted) return;
      options.onStatus?.("lost");
      lost = true;
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 30_000);
      continue;
    }
    if (res.status === 404) {
      const body = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
      if (body.code === "thread-not-found") {
        options.onStatus?.("gone");
        return;
      }
      options.onStatus?.("unsupported");
      if (followed.fallback) yield* followed.fallback(cursor);
      return;
    }
    if (!res.ok || !res.body) throw await refusal(followed.path, res);
    options.onStatus?.("live");
    followed.connected?.(lost);
    delay = transport.pollMs;
    try {
      for await (const frame of sseFrames(res.body)) {
        const items = [...followed.items(frame)];
        if (frame.id !== null) cursor = frame.id;
        for (const item of items) yield item;
      }
    } catch (err) {
      if (err instanceof RuntimeError) throw err;
      if (options.signal?.aborted) return;
    }
    options.onStatus?.("lost");
    lost = true;
  }
}
