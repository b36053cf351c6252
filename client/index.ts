import type { ErrorBody } from "../src/api/errors.js";
import type { ThreadEvent } from "../src/api/events.js";
import type { PostMessage } from "../src/api/threads.js";
import { CodeCalls } from "./code.js";
import { RuntimeError, sleep, type StreamStatus } from "./transport.js";

export type { RouteAnswer, RouteInput, RouteKey } from "./routes.js";
export { RuntimeError, type ClientOptions, type StreamStatus } from "./transport.js";
export type { ClientSpawnSpec, TurnOutcome, ApprovalAnswer } from "./threads.js";
export type { ParallelChild, ParallelResult } from "./work.js";

/** The client library: every route of the runtime by family (transport, operator, threads, work, workspaces, code), and the log followed live. */
export class RuntimeClient extends CodeCalls {
  /**
   * Every event after `after`, in order, for as long as the caller iterates: over the
   * `follow` push route, reconnecting from the last seq seen with Last-Event-ID; over
   * `tail` polling if the push route is missing. `onStatus` hears live/lost/unsupported/gone.
   */
  async *follow(
    id: string,
    options: { after?: number; signal?: AbortSignal; onStatus?: (s: StreamStatus) => void } = {},
  ): AsyncGenerator<ThreadEvent> {
    let cursor = options.after ?? 0;
    let delay = this.pollMs;
    while (!options.signal?.aborted) {
      let res: Response;
      try {
        res = await fetch(`${this.baseUrl}/threads/${id}/follow`, {
          headers: { accept: "text/event-stream", "last-event-id": String(cursor) },
          signal: options.signal,
        });
      } catch {
        if (options.signal?.aborted) return;
        options.onStatus?.("lost");
        await sleep(delay, options.signal);
        delay = Math.min(delay * 2, 30_000);
        continue;
      }
      if (res.status === 404 && (await res.json().catch(() => ({})) as ErrorBody).code === "thread-not-found") {
        options.onStatus?.("gone");
        return;
      }
      if (res.status === 404) {
        options.onStatus?.("unsupported");
        yield* this.poll(id, cursor, options.signal);
        return;
      }
      if (!res.ok || !res.body) throw new RuntimeError("rejected", `follow answered ${res.status}`, res.status);
      options.onStatus?.("live");
      delay = this.pollMs;
      try {
        for await (const event of parseEvents(res.body)) {
          cursor = event.seq;
          yield event;
        }
      } catch {
        if (options.signal?.aborted) return;
      }
      options.onStatus?.("lost");
    }
  }

  /**
   * Posts a message and yields the thread's events after it until the turn that answers
   * it has ended: that turn's `turn-ended` or `turn-failed` is the last event yielded.
   * Events of a turn already running (the message waits for the next) pass through too.
   * A held message starts no turn until it is released, so its events go on until then or
   * until the caller stops. Read through `follow`, with its reconnects and statuses.
   */
  async *sendAndFollow(
    id: string,
    message: PostMessage,
    options: { idempotencyKey?: string; signal?: AbortSignal; onStatus?: (s: StreamStatus) => void } = {},
  ): AsyncGenerator<ThreadEvent> {
    const { seq } = await this.post(id, message, { idempotencyKey: options.idempotencyKey });
    // Ending the follow's request when the turn ends, or when the caller's signal fires.
    const done = new AbortController();
    const stop = () => done.abort();
    options.signal?.addEventListener("abort", stop, { once: true });
    let turnId: string | null = null;
    try {
      for await (const event of this.follow(id, { after: seq, signal: done.signal, onStatus: options.onStatus })) {
        yield event;
        if (event.kind === "turn-started" && event.body.inputs.includes(seq)) turnId = event.body.turnId;
        else if ((event.kind === "turn-ended" || event.kind === "turn-failed") && event.body.turnId === turnId) return;
      }
    } finally {
      options.signal?.removeEventListener("abort", stop);
      stop();
    }
  }

  private async *poll(id: string, after: number, signal?: AbortSignal): AsyncGenerator<ThreadEvent> {
    let cursor = String(after);
    while (!signal?.aborted) {
      const page = await this.tail(id, { after: cursor, limit: this.tailLimit, wait: this.pollMs });
      for (const e of page.events) yield e;
      cursor = page.nextAfter;
    }
  }
}

/** The `data:` of each SSE frame with an id, parsed as an event; comments and hints are skipped. */
export async function* parseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ThreadEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      if (data && frame.includes("id: ")) {
        try {
          yield JSON.parse(data) as ThreadEvent;
        } catch {
          throw new RuntimeError("decode", `follow sent a frame that is not JSON: ${data.slice(0, 80)}`);
        }
      }
    }
  }
}
