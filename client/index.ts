import type { ThreadEvent } from "../src/api/events.js";
import type { PostMessage } from "../src/api/threads.js";
import { AguiCalls } from "./agui.js";
import { routeRequest } from "./routes.js";
import { followSse, frameData, messageSchema, sseFrames, type FollowOptions } from "./stream.js";
import type { StreamStatus } from "./transport.js";

const FOLLOW = "GET /threads/:id/follow";

export type { RouteAnswer, RouteInput, RouteKey } from "./routes.js";
export { RuntimeError, type ClientOptions, type StreamStatus } from "./transport.js";
export type { ClientSpawnSpec, TurnOutcome, ApprovalAnswer } from "./threads.js";
export type { ParallelChild, ParallelResult } from "./work.js";
export { AguiContinuity, type AguiEvent, type AguiFrame, type RunAgentInput } from "./agui.js";

/** The client library: every route of the runtime by family (transport, operator, threads, work, workspaces, code, AG-UI), and the log followed live. */
export class RuntimeClient extends AguiCalls {
  /**
   * Every event after `after`, in order, for as long as the caller iterates: over the
   * `follow` push route, reconnecting from the last seq seen with Last-Event-ID; over
   * `tail` polling if the push route is missing. `onStatus` hears live/lost/unsupported/gone.
   */
  follow(id: string, options: FollowOptions & { after?: number } = {}): AsyncGenerator<ThreadEvent> {
    const schema = messageSchema(FOLLOW);
    return followSse<ThreadEvent>(
      this,
      {
        path: routeRequest(FOLLOW, { params: { id } }).path,
        after: options.after ?? 0,
        items: (frame) => (frame.id === null ? [] : [frameData<ThreadEvent>(FOLLOW, schema, frame.data)]),
        fallback: (cursor) => this.poll(id, cursor, options.signal),
      },
      options,
    );
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
  for await (const frame of sseFrames(body)) if (frame.id !== null) yield frameData<ThreadEvent>(FOLLOW, undefined, frame.data);
}
