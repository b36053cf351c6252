import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import type { RuntimeConfig } from "../../../src/platform/config.js";
import { FollowHub } from "../../lib/follow-hub.js";
import { forwardPage, reversePage } from "../../lib/pages.js";
import { SSE_HEADERS } from "../../lib/sse.js";
import { missing } from "../refusals.js";
import type { ThreadState } from "../thread-state.js";
import type { DeltaHub } from "./delta-hub.js";
import { AguiFeed } from "./agui-feed.js";
import type { AguiPage } from "../../../src/api/agui.js";
import type { SingleRun } from "../../../src/rules/agui-projection.js";
import type { EventLog, SerializedEvent, StoredEvent } from "./event-log.js";

export interface TailQuery {
  after?: number;
  before?: number;
  limit: number;
  waitMs: number;
}

/** What the readers use of their Thread. */
export interface ReadersThread {
  readonly config: Pick<RuntimeConfig, "heartbeatMs" | "streamSubscribers">;
  readonly sql: SqlStorage;
  readonly log: EventLog;
  readonly deltas: DeltaHub;
  state(): ThreadState | null;
}

/**
 * The log's readers: pages (a long poll among them), one tool result's body, and the SSE
 * routes, `follow` (durable events, once on disk) and `stream` (live deltas).
 */
export class Readers {
  private readonly followers: FollowHub<StoredEvent, SerializedEvent>;
  /** Long polls waiting for the next durable event. */
  private readonly waiters = new Set<() => void>();
  private readonly agui: AguiFeed;

  constructor(private readonly thread: ReadersThread) {
    this.followers = new FollowHub(thread.log, thread.config.heartbeatMs);
    this.agui = new AguiFeed({ sql: thread.sql, log: thread.log, heartbeatMs: thread.config.heartbeatMs, threadId: () => thread.state()?.id ?? "" });
    thread.deltas.tap((frames) => this.agui.deltas(frames));
  }

  /** `GET /threads/:id/agui-page`. */
  async aguiPage(before: number | undefined, limit: number): Promise<Outcome<AguiPage>> {
    if (!this.thread.state()) return missing();
    return ok(await this.agui.page(before ?? this.thread.log.durableSeq + 1, limit));
  }

  async page(q: TailQuery): Promise<Outcome<string>> {
    const log = this.thread.log;
    if (!this.thread.state()) return missing();
    if (q.before !== undefined) {
      const events = await log.serialize(log.backward(q.before, q.limit));
      return ok(reversePage(events, (events[events.length - 1]?.seq ?? 1) > 1));
    }
    const after = q.after ?? 0;
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    if (q.waitMs > 0 && after >= log.durableSeq) await this.waitForAppend(q.waitMs);
    const rows = log.forward(after, q.limit);
    const events = await log.serialize(rows);
    const nextAfter = rows.length ? rows[rows.length - 1]!.seq : after;
    return ok(forwardPage(events, nextAfter, nextAfter < log.durableSeq));
  }

  /** The whole body of one tool result, as JSON text. */
  async toolResult(seq: number): Promise<Outcome<string>> {
    if (!this.thread.state()) return missing();
    const row = this.thread.log.get(seq);
    if (!row) return refuse(404, `thread has no event ${seq}`, CODES.eventNotFound);
    if (row.kind !== "tool-result") return refuse(404, `event ${seq} is a ${row.kind}, not a tool result`, CODES.notAToolResult);
    return ok(await this.thread.log.body(row));
  }

  /** The SSE routes, which come in over fetch: /follow?after=N, /stream. */
  async serve(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const after = Number(url.searchParams.get("after"));
    const outcome =
      url.pathname === "/follow"
        ? this.follow(after, request.signal)
        : url.pathname === "/stream"
          ? this.stream()
          : url.pathname === "/agui"
            ? this.aguiStream(after, null, request.signal)
            : url.pathname === "/agui-run"
              ? this.aguiStream(after, singleRun(url.searchParams), request.signal)
              : null;
    if (!outcome) return Response.json({ error: `no object route ${url.pathname}`, code: CODES.routeNotFound }, { status: 404 });
    if (!outcome.ok) return Response.json(outcome.body, { status: outcome.status });
    return new Response(outcome.value, { headers: SSE_HEADERS });
  }

  counts(): { follow: number; stream: number; agui: number } {
    return { follow: this.followers.size, stream: this.thread.deltas.size, agui: this.agui.size };
  }

  /** A batch was committed: followers get it once it is durable (false while it is not). */
  settle(events: SerializedEvent[], durable: boolean): boolean {
    this.agui.settle(events, durable);
    return this.followers.settle(events, durable);
  }

  /** Wakes the long polls after a durable batch. */
  wakeTails(): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  private follow(after: number, signal: AbortSignal): Outcome<ReadableStream<Uint8Array>> {
    if (!this.thread.state()) return missing();
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    return ok(this.followers.open(after, { signal }));
  }

  private aguiStream(after: number, single: SingleRun | null, signal: AbortSignal): Outcome<ReadableStream<Uint8Array>> {
    if (!this.thread.state()) return missing();
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    return ok(this.agui.open(after, single, signal));
  }

  private stream(): Outcome<ReadableStream<Uint8Array>> {
    if (!this.thread.state()) return missing();
    const stream = this.thread.deltas.open();
    if (!stream)
      return refuse(429, `thread already has ${this.thread.config.streamSubscribers} stream subscribers`, CODES.streamSubscribersFull, {
        limit: this.thread.config.streamSubscribers,
      });
    return ok(stream);
  }

  private waitForAppend(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private beyondEnd(after: number): Outcome<never> | null {
    if (after <= this.thread.log.durableSeq) return null;
    return refuse(400, `after=${after} is beyond the thread's last event (${this.thread.log.durableSeq})`, CODES.cursorBeyondEnd);
  }
}

/** A POST run's stream: `run` (the caller's run id), `inputs` (the seqs of the messages it posted), `answered` (the interrupt ids it answered, JSON). */
function singleRun(params: URLSearchParams): SingleRun {
  const inputs = (params.get("inputs") ?? "").split(",").filter(Boolean).map(Number);
  const answered = JSON.parse(params.get("answered") ?? "[]") as string[];
  return { runId: params.get("run") ?? "", inputs: new Set(inputs), turnId: null, answered: new Set(answered) };
}
