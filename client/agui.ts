import type { AguiEvent, RunAgentInput } from "../src/api/agui.js";
import { CodeCalls } from "./code.js";
import { routeRequest } from "./routes.js";
import { followSse, frameData, messageSchema, sseFrames, type FollowOptions } from "./stream.js";
import { RuntimeError } from "./transport.js";

export type { AguiEvent, RunAgentInput } from "../src/api/agui.js";

/** One AG-UI event as the runtime sent it, with the seq of the log event it ends (null for the frames before a group's last, live text and a run reopened). */
export interface AguiFrame {
  seq: number | null;
  event: AguiEvent;
}

const FOLLOW = "GET /threads/:id/agui";
const RUN = "POST /threads/:id/agui";

/** Text (a message's, or a tool call's arguments) open on the caller's side, and how much of it a resumed connection sends again. */
interface Open {
  sent: number;
  again: number;
}

/**
 * What keeps a followed AG-UI stream whole across a lost connection. The runtime resumes
 * after the last seq the client saw, so it sends again what came after that seq: the run
 * the reader is in (`RUN_STARTED`), the reply being written with its text so far, or a
 * stored reply whole where live text had shown part of it, and the first frames of a log
 * event whose last frame (the one with the id) never arrived. The caller already has
 * those: the run it is in is not started again, a message or tool call it has open is not
 * started again and only the text it has not seen is passed on, and the frames it was
 * passed after that seq are passed once. A message the lost connection left open that
 * the run ends without closing (its reply was never stored) is closed before the run ends,
 * so the stream the caller sees stays one the official client accepts.
 */
export class AguiContinuity {
  private run: string | null = null;
  private readonly texts = new Map<string, Open>();
  private readonly tools = new Map<string, Open>();
  /** The events passed since the last frame with an id. */
  private unconfirmed: string[] = [];
  /** What a resumed connection sends again, until its first frame with an id. */
  private again: { run: string | null; starts: Set<string>; carried: Set<string>; frames: string[] } | null = null;

  /** A connection is live: after a lost one, what the runtime sends again is expected. */
  connected(resumed: boolean): void {
    if (!resumed) return;
    for (const open of [...this.texts.values(), ...this.tools.values()]) open.again = open.sent;
    const open = [...this.texts.keys(), ...this.tools.keys()];
    this.again = { run: this.run, starts: new Set(open), carried: new Set(open), frames: this.unconfirmed };
    this.unconfirmed = [];
  }

  /** The events to pass on for one frame. */
  pass(event: AguiEvent, id: number | null): AguiEvent[] {
    const out = this.filter(event, id);
    if (id !== null) {
      this.unconfirmed = [];
      if (this.again) this.again.frames = [];
    } else this.unconfirmed.push(...out.map((e) => JSON.stringify(e)));
    return out;
  }

  private filter(event: AguiEvent, id: number | null): AguiEvent[] {
    const again = this.again;
    switch (event.type) {
      case "RUN_STARTED":
        if (again?.run === event.runId && this.run === event.runId) {
          again.run = null;
          return [];
        }
        this.run = event.runId;
        return [event];
      case "RUN_FINISHED":
      case "RUN_ERROR": {
        this.run = null;
        const closing: AguiEvent[] = [];
        for (const messageId of this.texts.keys()) if (again?.carried.has(messageId)) closing.push({ type: "TEXT_MESSAGE_END", messageId });
        for (const toolCallId of this.tools.keys()) if (again?.carried.has(toolCallId)) closing.push({ type: "TOOL_CALL_END", toolCallId });
        this.texts.clear();
        this.tools.clear();
        return [...closing, event];
      }
      case "TEXT_MESSAGE_START":
        if (again?.starts.delete(event.messageId)) return [];
        if (this.repeated(event, id)) return [];
        this.texts.set(event.messageId, { sent: 0, again: 0 });
        return [event];
      case "TOOL_CALL_START":
        if (again?.starts.delete(event.toolCallId)) return [];
        if (this.repeated(event, id)) return [];
        this.tools.set(event.toolCallId, { sent: 0, again: 0 });
        return [event];
      case "TEXT_MESSAGE_CONTENT":
      case "TOOL_CALL_ARGS": {
        const open = event.type === "TEXT_MESSAGE_CONTENT" ? this.texts.get(event.messageId) : this.tools.get(event.toolCallId);
        if (!open) return this.repeated(event, id) ? [] : [event];
        const cut = Math.min(open.again, event.delta.length);
        open.again -= cut;
        open.sent += event.delta.length - cut;
        if (cut === 0) return [event];
        const delta = event.delta.slice(cut);
        return delta ? [{ ...event, delta }] : [];
      }
      case "TEXT_MESSAGE_END":
        if (!this.texts.delete(event.messageId)) return this.repeated(event, id) ? [] : [event];
        return [event];
      case "TOOL_CALL_END":
        if (!this.tools.delete(event.toolCallId)) return this.repeated(event, id) ? [] : [event];
        return [event];
      default:
        return this.repeated(event, id) ? [] : [event];
    }
  }

  /** Whether a resumed connection sends again a frame it was passed after the last seq (a frame with an id never was). */
  private repeated(event: AguiEvent, id: number | null): boolean {
    const frames = this.again?.frames;
    if (id !== null || !frames?.length) return false;
    const at = frames.indexOf(JSON.stringify(event));
    if (at < 0) return false;
    frames.splice(at, 1);
    return true;
  }
}

/** The thread as AG-UI (docs/agui.md): a page of its log, the log followed live, and runs. */
export class AguiCalls extends CodeCalls {
  /** One reverse page of the log as AG-UI frame groups: pass `nextBefore` as `before` for the page before it. */
  aguiPage(id: string, query: { before?: number; limit?: number } = {}) {
    return this.route("GET /threads/:id/agui-page", { params: { id }, query });
  }

  /**
   * The thread's AG-UI events after the seq `after` (0: from the start), for as long as the
   * caller iterates: the log, then live events and text, over `GET /threads/:id/agui`. It
   * reconnects from the last seq it saw, as `follow` does, with the same statuses; what
   * the runtime sends again on a resumed connection is passed once (`AguiContinuity`). A
   * runtime without the route is `unsupported` and ends the iteration (it has no AG-UI
   * page either). Each event is checked by the route's declared schema.
   */
  followAgui(id: string, options: FollowOptions & { after?: number } = {}): AsyncGenerator<AguiFrame> {
    const continuity = new AguiContinuity();
    const schema = messageSchema(FOLLOW);
    return followSse<AguiFrame>(
      this,
      {
        path: routeRequest(FOLLOW, { params: { id } }).path,
        after: options.after ?? 0,
        connected: (resumed) => continuity.connected(resumed),
        items: (frame) => {
          const passed = continuity.pass(frameData<AguiEvent>(FOLLOW, schema, frame.data), frame.id);
          return passed.map((event, i) => ({ seq: i === passed.length - 1 ? frame.id : null, event }));
        },
      },
      options,
    );
  }

  /**
   * Runs the thread as an AG-UI client does (`RunAgentInput`: its new user messages are
   * posted, its `resume` entries answer interrupts). Resolves once the runtime took the
   * run, with its events from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR`; a refusal
   * is a `rejected` failure with its code before any event. A run's stream is not resumed:
   * one that ends before the run does is a `transport` failure, and `followAgui` from the
   * last seq seen reads on.
   */
  async runAgui(id: string, input: RunAgentInput, options: { signal?: AbortSignal } = {}): Promise<AsyncGenerator<AguiFrame>> {
    const { method, path, body } = routeRequest(RUN, { params: { id }, body: input });
    const res = await this.request(method, path, body, { accept: "text/event-stream" }, options.signal);
    if (!res.ok) await this.decode(method, path, res);
    if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream"))
      throw new RuntimeError("decode", `${method} ${path}: the answer is not an event stream (${res.status})`, res.status);
    return runEvents(res.body, path);
  }
}

async function* runEvents(body: ReadableStream<Uint8Array>, path: string): AsyncGenerator<AguiFrame> {
  const schema = messageSchema(RUN);
  let ended = false;
  try {
    for await (const frame of sseFrames(body)) {
      const event = frameData<AguiEvent>(RUN, schema, frame.data);
      ended = event.type === "RUN_ERROR" || event.type === "RUN_FINISHED";
      yield { seq: frame.id, event };
    }
  } catch (err) {
    if (err instanceof RuntimeError) throw err;
    throw new RuntimeError("transport", `POST ${path}: ${(err as Error).message}`);
  }
  if (!ended) throw new RuntimeError("transport", `POST ${path}: the run's stream ended before the run did`);
}
