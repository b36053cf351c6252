import type { WindowBody, WindowKind, WindowRefusal, WindowTrigger } from "../../../src/api/compaction.js";
import { estimateEntries, type Lines } from "../../../src/rules/compaction.js";
import type { ThreadAccess } from "../thread-access.js";
import { activeModel } from "../thread-state.js";
import { compactionOptions, KEPT, SUMMARY_TOKENS, type Recorded, type WindowMeter } from "./window.js";

/** What the window's records use of their Thread. */
export type RecordsThread = Pick<ThreadAccess, "config" | "state" | "tables" | "log" | "commits" | "append" | "saveState" | "reschedule">;

/** What the window's records use of its state and measure. */
export type RecordsMeter = Pick<WindowMeter, "read" | "ws" | "lines" | "tokens" | "ownPrompt">;

/**
 * The window's events, each written with its bookkeeping in one commit: a reduction, an
 * engine's own compaction, a line crossed, a forced window's disposition, a refusal, and
 * the system lines that say what happened.
 */
export class WindowRecords {
  constructor(
    private readonly thread: RecordsThread,
    private readonly meter: RecordsMeter,
  ) {}

  async say(level: "info" | "error", text: string, turnId?: string): Promise<void> {
    const prepared = await this.thread.log.prepare("system", { level, text, ...(turnId ? { turnId } : {}) });
    await this.thread.commits.write(() => {
      this.thread.append(prepared);
    });
  }

  /**
   * One reduction, in one commit: its `window` event, its row, the new count. `newRound`:
   * the first of a round (WindowThrash counts rounds). `forcedWindow`: it settles a forced
   * window, so an engine's next session replaces one too full to resume.
   */
  async record(body: WindowBody, turn: number, newRound: boolean, forcedWindow: boolean): Promise<Recorded> {
    const prepared = await this.thread.log.prepare("window", body);
    const seq = await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.thread.tables.addWindow(e.seq, body);
      const ws = this.meter.ws();
      ws.base = { row: this.thread.tables.lastRow(), tokens: body.tokensAfter };
      // A reduction answers a warning; a forced window is settled by its disposition.
      if (ws.pending && !ws.pending.forced) ws.pending = null;
      if (newRound) ws.rounds = [...ws.rounds, turn].slice(-KEPT);
      // The runtime's cut reaches an engine with a session of its own through a new session.
      ws.reseed = forcedWindow || ws.reseed === "forced" ? "forced" : "asked";
      this.thread.saveState();
      return e.seq;
    });
    return { seq, ...body };
  }

  /** A round of reductions that the engine's own compaction was (WindowThrash counts rounds). */
  async round(turn: number): Promise<void> {
    await this.thread.commits.write(() => {
      const ws = this.meter.ws();
      ws.rounds = [...ws.rounds, turn].slice(-KEPT);
      this.thread.saveState();
    });
  }

  /**
   * The engine compacted its own session (asked, or on its own mid-turn): a `summary`
   * window the engine's model wrote, cutting nothing of the runtime's transcript. What its
   * session holds after is estimated (its own prompt, the user's messages, a summary's
   * worth) until its next call says.
   */
  async recordEngineCompaction(trigger: WindowTrigger, preTokens: number | undefined): Promise<Recorded> {
    const s = this.thread.state()!;
    const before = preTokens ?? this.meter.tokens();
    const users = estimateEntries(this.thread.tables.context().filter((h) => h.entry.role === "user"));
    const after = Math.min(before, this.meter.ownPrompt() + users + SUMMARY_TOKENS);
    const body: WindowBody = { kind: "summary", cut: [], tokensBefore: before, tokensAfter: after, trigger, summaryModel: activeModel(s).model };
    const prepared = await this.thread.log.prepare("window", body);
    const seq = await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.thread.tables.addWindow(e.seq, body);
      const ws = this.meter.ws();
      ws.base = { row: this.thread.tables.lastRow(), tokens: after };
      ws.summarized = true;
      if (ws.pending && !ws.pending.forced) ws.pending = null;
      this.thread.saveState();
      return e.seq;
    });
    return { seq, ...body };
  }

  /** A line crossed: `waits`, for a forced one, whether the caller's choice is waited for (else its deadline is 0). */
  async pend(forced: boolean, tokens: number, lines: Lines, waits = true): Promise<void> {
    const deadlineMs = waits ? this.thread.config.windowDeadlineMs : 0;
    const options = compactionOptions();
    const body = { forced, tokens, window: lines.window, ...(forced ? { deadlineMs } : {}), options };
    const prepared = await this.thread.log.prepare("window-pending", body);
    await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.meter.ws().pending = { seq: e.seq, forced, tokens, window: lines.window, deadlineMs, deadlineAt: forced ? Date.now() + deadlineMs : null, options };
      this.thread.saveState();
    });
    // The wait below is this instance's: an eviction takes it along, the alarm does not.
    if (forced) await this.thread.reschedule();
  }

  /** Settles the forced window, once: a window already settled gets no second disposition. */
  async dispose(body: { settledBy: "request" | "deadline" | "at-once"; mode: WindowKind | null }): Promise<void> {
    const prepared = await this.thread.log.prepare("compaction-disposition", body);
    await this.thread.commits.write(() => {
      if (!this.meter.read().pending?.forced) return;
      this.thread.append(prepared);
      this.meter.ws().pending = null;
      this.thread.saveState();
    });
  }

  thrash(turnId?: string): Promise<void> {
    return this.refuse("WindowThrash", `WindowThrash: ${this.meter.read().rounds.length} reductions in the last turns; the runtime stops reducing instead of looping`, true, turnId);
  }

  noHeadroom(inTurn: boolean, turnId?: string): Promise<void> {
    const lines = this.meter.lines();
    const text = `WindowNoHeadroom: after every reduction the context still takes ${this.meter.tokens()} of ${lines?.window ?? "?"} tokens; what cannot be cut (the system prompt, tools, the user messages kept verbatim, the current request) leaves no room for the answer`;
    return this.refuse("WindowNoHeadroom", text, !inTurn, turnId);
  }

  /** A refusal: a system line, kept for `GET /compact`, and (`settlesForced`) a forced window settled as refused. */
  async refuse(refusal: WindowRefusal, text: string, settlesForced: boolean, turnId?: string): Promise<void> {
    const line = await this.thread.log.prepare("system", { level: "error", text, ...(turnId ? { turnId } : {}) });
    const disposition = settlesForced ? await this.thread.log.prepare("compaction-disposition", { settledBy: "refused", mode: null, refusal }) : null;
    await this.thread.commits.write(() => {
      const e = this.thread.append(line);
      const ws = this.meter.ws();
      if (disposition && ws.pending?.forced) {
        this.thread.append(disposition);
        ws.pending = null;
      }
      ws.refusals = [...ws.refusals, { seq: e.seq, ts: e.ts, refusal, text }].slice(-KEPT);
      this.thread.saveState();
    });
  }
}
