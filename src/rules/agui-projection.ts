import {
  AGUI_SENDER,
  APPROVAL_RESPONSE_SCHEMA,
  QUESTION_RESPONSE_SCHEMA,
  type AguiEvent,
  type Interrupt,
  type TokenUsage,
} from "../api/agui.js";

/** A log event as the projection reads it: its body parsed. */
export interface ProjectedEvent {
  seq: number;
  kind: string;
  body: Record<string, unknown>;
}

/** The kinds that change what the projection remembers; a fold to a reader's position reads only these. */
export const AGUI_STATE_KINDS = [
  "turn-started",
  "reply",
  "tool-result",
  "approval-request",
  "question",
  "approval-resolved",
  "question-resolved",
  "usage",
  "turn-ended",
  "turn-failed",
] as const;

/** A POST run: one AG-UI run, the caller's, that ends with the turn it waits for. */
export interface SingleRun {
  runId: string;
  /** The messages this run posted: the turn whose inputs include one is the run's turn. */
  inputs: ReadonlySet<number>;
  /** The turn a resume continued, when the run posted no message. */
  turnId: string | null;
  /** The interrupts the run's resume entries answered: once all are resolved, a run that still has some open finishes with them. */
  answered: ReadonlySet<string>;
}

interface Turn {
  id: string;
  replies: number;
  usage: TokenUsage[];
  /** The reply the model's message opened with, until a tool result ends that message: the parent of its tool calls. */
  message: string | null;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The thread's log as AG-UI events (docs/agui.md has the table). One projection is one
 * reader's position: it remembers the turn in progress, the interrupts open in it, the
 * usage it has reported and the reply the model is writing, so that what it sends always
 * passes the official client's verifier: a run is open before anything is sent in it,
 * and nothing is open when a run finishes.
 */
export class AguiProjection {
  private turn: Turn | null = null;
  private readonly interrupts = new Map<string, Interrupt>();
  /** Held messages (by seq) and their text as last edited: a release shows the message then. */
  private readonly held = new Map<number, string>();
  /** The reply streaming now, from live deltas: its id and the text sent of it. */
  private text: { messageId: string; sent: string } | null = null;
  private started = false;
  /** A single run that has finished: nothing more is sent. */
  finished = false;

  /** A single run's answered interrupts not yet resolved in the log. */
  private readonly unanswered: Set<string> | null;

  constructor(
    private readonly threadId: string,
    private single: SingleRun | null = null,
  ) {
    this.unanswered = single && single.answered.size > 0 ? new Set(single.answered) : null;
  }

  /**
   * Takes in an event before the reader's position, for what it changes only: a single
   * run's own rules (ending at its turn) start where its stream does.
   */
  fold(e: ProjectedEvent): void {
    const single = this.single;
    this.single = null;
    this.event(e);
    this.single = single;
  }

  /** A message held at the reader's position, with its text then (the feed reads these from the log). */
  holding(seq: number, text: string): void {
    this.held.set(seq, text);
  }

  /** Whether a run is open on the wire between events. */
  private get runOpen(): boolean {
    if (this.single) return this.started && !this.finished;
    return this.turn !== null && this.interrupts.size === 0;
  }

  /**
   * What a reader joining here is sent first: the run it joins in the middle of (or the
   * single run), and the reply being written, with its text so far.
   */
  opening(): AguiEvent[] {
    const out: AguiEvent[] = [];
    if (this.single) {
      this.started = true;
      // A run that posted no message continues the turn its resume answered.
      if (this.single.inputs.size === 0 && this.single.turnId === null) this.single.turnId = this.turn?.id ?? null;
      out.push({ type: "RUN_STARTED", threadId: this.threadId, runId: this.single.runId });
    } else if (this.runOpen) out.push(this.runStarted(this.turn!.id));
    // A reader joining while the turn waits on a person is told what it waits on: the
    // official client learns its pending interrupts only from a run's end.
    else if (this.turn && this.interrupts.size > 0) out.push(this.runStarted(this.turn.id), this.finish(this.turn.id));
    if (this.text && this.runOpen) {
      out.push({ type: "TEXT_MESSAGE_START", messageId: this.text.messageId, role: "assistant" });
      if (this.text.sent) out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.text.messageId, delta: this.text.sent });
    }
    return out;
  }

  /** A live delta of the running turn. Only text is shown; other deltas have no AG-UI event. */
  delta(frame: Record<string, unknown>): AguiEvent[] {
    if (frame.type !== "text" || !this.turn || frame.turnId !== this.turn.id || this.finished) return [];
    const delta = str(frame.delta);
    if (!delta) return [];
    const out: AguiEvent[] = [];
    if (!this.runOpen) return out;
    if (!this.text) {
      this.text = { messageId: this.replyId(this.turn.replies + 1), sent: "" };
      out.push({ type: "TEXT_MESSAGE_START", messageId: this.text.messageId, role: "assistant" });
    }
    this.text.sent += delta;
    out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.text.messageId, delta });
    return out;
  }

  /** A durable event: what it changes, and the AG-UI events it is sent as. */
  event(e: ProjectedEvent): AguiEvent[] {
    if (this.finished) return [];
    const b = e.body;
    switch (e.kind) {
      case "turn-started": {
        const wasOpen = this.runOpen;
        this.turn = { id: str(b.turnId), replies: 0, usage: [], message: null };
        this.interrupts.clear();
        this.text = null;
        if (this.single) {
          const inputs = Array.isArray(b.inputs) ? (b.inputs as number[]) : [];
          if (inputs.some((seq) => this.single!.inputs.has(seq))) this.single.turnId = this.turn.id;
          return [];
        }
        return wasOpen ? [] : [this.runStarted(this.turn.id)];
      }
      case "reply": {
        if (this.turn) this.turn.replies++;
        const messageId = this.turn ? this.replyId(this.turn.replies) : `r${e.seq}`;
        if (this.turn) this.turn.message = messageId;
        const text = str(b.text);
        const out: AguiEvent[] = [];
        if (this.text?.messageId === messageId) {
          const rest = text.startsWith(this.text.sent) ? text.slice(this.text.sent.length) : "";
          if (rest) out.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: rest });
          out.push({ type: "TEXT_MESSAGE_END", messageId });
          this.text = null;
          return out;
        }
        out.push(...this.closeText());
        out.push(...textMessage(messageId, "assistant", text));
        return this.inRun(e.seq, out);
      }
      case "tool-call": {
        const toolCallId = str(b.callId);
        const parent = this.turn?.message;
        return this.inRun(e.seq, [
          ...this.closeText(),
          { type: "TOOL_CALL_START", toolCallId, toolCallName: str(b.name), ...(parent ? { parentMessageId: parent } : {}) },
          { type: "TOOL_CALL_ARGS", toolCallId, delta: JSON.stringify(b.input ?? null) },
          { type: "TOOL_CALL_END", toolCallId },
        ]);
      }
      case "tool-result":
        if (this.turn) this.turn.message = null;
        return this.inRun(e.seq, [{ type: "TOOL_CALL_RESULT", messageId: `t${e.seq}`, toolCallId: str(b.callId), content: str(b.output), role: "tool" }]);
      case "approval-request":
      case "question": {
        const interrupt: Interrupt =
          e.kind === "approval-request"
            ? { id: str(b.approvalId), reason: "tool-approval", toolCallId: str(b.callId), message: `Allow ${str(b.name)}?`, responseSchema: { ...APPROVAL_RESPONSE_SCHEMA } }
            : { id: str(b.requestId), reason: "question", message: str(b.question), responseSchema: { ...QUESTION_RESPONSE_SCHEMA } };
        const out = this.runOpen ? this.closeText() : [this.runStarted(this.turn?.id ?? `seq-${e.seq}`)];
        this.interrupts.set(interrupt.id, interrupt);
        out.push(this.finish(this.single?.runId ?? this.turn?.id ?? `seq-${e.seq}`));
        return out;
      }
      case "approval-resolved":
      case "question-resolved": {
        const id = str(e.kind === "approval-resolved" ? b.approvalId : b.requestId);
        const wasOpen = this.runOpen;
        this.interrupts.delete(id);
        const custom: AguiEvent = { type: "CUSTOM", name: e.kind, value: b };
        if (this.single) {
          this.unanswered?.delete(id);
          // The client answered what it meant to; the turn still waits on others, which this run hands back.
          if (this.unanswered?.size === 0 && this.interrupts.size > 0) return [custom, ...this.closeText(), this.finish(this.single.runId)];
          return [custom];
        }
        if (this.runOpen) return wasOpen ? [custom] : [this.runStarted(this.turn!.id), custom];
        return this.inRun(e.seq, [custom]);
      }
      case "usage": {
        if (!this.turn) return [];
        const input = typeof b.inputTokens === "number" ? b.inputTokens : 0;
        const output = typeof b.outputTokens === "number" ? b.outputTokens : 0;
        this.turn.usage.push({ model: str(b.model), inputTokens: input, outputTokens: output, totalTokens: input + output });
        return [];
      }
      case "turn-ended":
      case "turn-failed":
        return this.turnEnd(e);
      case "message": {
        if (b.hold === true) {
          this.held.set(e.seq, str(b.text));
          return this.inRun(e.seq, [{ type: "CUSTOM", name: "message-held", value: { seq: e.seq, ...b } }]);
        }
        const id = b.from === AGUI_SENDER && typeof b.clientMessageId === "string" ? b.clientMessageId : `m${e.seq}`;
        return this.inRun(e.seq, textMessage(id, "user", str(b.text)));
      }
      case "message-edited":
        if (typeof b.target === "number" && this.held.has(b.target)) this.held.set(b.target, str(b.text));
        return this.inRun(e.seq, [{ type: "CUSTOM", name: e.kind, value: b }]);
      case "message-deleted":
        if (typeof b.target === "number") this.held.delete(b.target);
        return this.inRun(e.seq, [{ type: "CUSTOM", name: e.kind, value: b }]);
      case "message-released": {
        const text = typeof b.target === "number" ? this.held.get(b.target) : undefined;
        if (text === undefined) return this.inRun(e.seq, [{ type: "CUSTOM", name: e.kind, value: b }]);
        this.held.delete(b.target as number);
        // The person's message, as it stood when it was let go: the turn that answers it follows.
        return this.inRun(e.seq, textMessage(`m${b.target as number}`, "user", text));
      }
      case "system":
        return this.inRun(e.seq, textMessage(`s${e.seq}`, "system", str(b.text)));
      case "interface":
        return this.inRun(e.seq, [
          {
            type: "ACTIVITY_SNAPSHOT",
            messageId: str(b.interfaceId),
            activityType: "interface",
            content: { tree: b.tree, source: b.source, ...(b.model !== undefined ? { model: b.model } : {}) },
          },
        ]);
      default:
        return this.inRun(e.seq, [{ type: "CUSTOM", name: e.kind, value: b }]);
    }
  }

  /** The turn's run finishes: `RUN_FINISHED` (cancelled when it was interrupted) or `RUN_ERROR`, with the turn's usage. */
  private turnEnd(e: ProjectedEvent): AguiEvent[] {
    const turn = this.turn;
    const turnId = str(e.body.turnId);
    const wasOpen = this.runOpen;
    const out = this.closeText();
    this.turn = null;
    this.interrupts.clear();
    if (this.single) {
      // Another turn (one that ran before the run's messages were taken) ends: the run goes on.
      if (this.single.turnId !== turnId) return out;
      this.finished = true;
    } else if (!wasOpen) out.push(this.runStarted(turnId));
    const runId = this.single?.runId ?? turnId;
    const usage = turn && turn.usage.length > 0 ? { usage: turn.usage } : {};
    if (e.kind === "turn-failed" && e.body.class !== "interrupted") out.push({ type: "RUN_ERROR", message: str(e.body.error), code: str(e.body.class), ...usage });
    else out.push({ type: "RUN_FINISHED", threadId: this.threadId, runId, outcome: { type: e.kind === "turn-failed" ? "cancelled" : "success" }, ...usage });
    return out;
  }

  /** `events` inside a run: as they are when one is open, else in a run of their own. */
  private inRun(seq: number, events: AguiEvent[]): AguiEvent[] {
    if (this.runOpen) return events;
    const runId = this.turn?.id ?? `seq-${seq}`;
    return [this.runStarted(runId), ...events, this.finish(runId)];
  }

  /** Finishes a run: with the open interrupts when there are any (a single run then ends). */
  private finish(runId: string): AguiEvent {
    if (this.interrupts.size === 0) return { type: "RUN_FINISHED", threadId: this.threadId, runId, outcome: { type: "success" } };
    if (this.single) this.finished = true;
    return { type: "RUN_FINISHED", threadId: this.threadId, runId, outcome: { type: "interrupt", interrupts: [...this.interrupts.values()] } };
  }

  private closeText(): AguiEvent[] {
    if (!this.text) return [];
    const messageId = this.text.messageId;
    this.text = null;
    return [{ type: "TEXT_MESSAGE_END", messageId }];
  }

  private runStarted(runId: string): AguiEvent {
    return { type: "RUN_STARTED", threadId: this.threadId, runId };
  }

  private replyId(n: number): string {
    return `${this.turn!.id}.r${n}`;
  }
}

function textMessage(messageId: string, role: "assistant" | "user" | "system", text: string): AguiEvent[] {
  return [
    { type: "TEXT_MESSAGE_START", messageId, role },
    ...(text ? [{ type: "TEXT_MESSAGE_CONTENT" as const, messageId, delta: text }] : []),
    { type: "TEXT_MESSAGE_END", messageId },
  ];
}
