import { COMPACTION_MODES, type CompactionMode, type CompactionStatus, type WindowBody } from "../../../src/api/compaction.js";
import type { TurnRequest } from "../../../src/api/engine.js";
import { ok, type Outcome } from "../../../src/api/outcome.js";
import { DEFAULT_WINDOW_SETTINGS, estimateEntries, linesOf, type Lines, type WindowSettings } from "../../../src/rules/compaction.js";
import { missing } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import { activeModel, type WindowState } from "../thread-state.js";
import type { UsageReport } from "../turn/events.js";

/** Reductions kept for WindowThrash's count, and refusals for `GET /compact`. */
export const KEPT = 10;

/** What a summary is taken to hold before it is written (an engine's own, until its next call says). */
export const SUMMARY_TOKENS = 500;

/** The kinds that cut the runtime's transcript, without a model. */
export const CHEAP: readonly CompactionMode[] = ["microcompact", "collapse"];

/** A reduction as its `window` event recorded it. */
export type Recorded = WindowBody & { seq: number };

/** The modes `POST /compact` takes: every one, as some model can always be asked for a summary. */
export function compactionOptions(): CompactionMode[] {
  return [...COMPACTION_MODES];
}

const NO_WINDOW: Readonly<WindowState> = { windows: {}, base: null, pending: null, rounds: [], reseed: false, refusals: [] };

/** What the window's state uses of its Thread. */
export type WindowThread = Pick<ThreadAccess, "config" | "state" | "tables" | "commits" | "saveState">;

/**
 * The window's state in the Thread's (`WindowState`) and its measure: the lines of the
 * model turns run on, the tokens in the context, what an engine's session holds beyond
 * the transcript, and the bookkeeping a model call or a dropped turn changes.
 */
export class WindowMeter {
  constructor(private readonly thread: WindowThread) {}

  settings(over: Partial<WindowSettings> = {}): WindowSettings {
    const c = this.thread.config;
    return { ...DEFAULT_WINDOW_SETTINGS, warnRatio: c.windowWarnPercent / 100, reserveTokens: c.windowReserveTokens, ...over };
  }

  /** The window's bookkeeping, to read. */
  read(): Readonly<WindowState> {
    return this.thread.state()?.window ?? NO_WINDOW;
  }

  /** The window's bookkeeping, to change: only inside a commit, then saveState. */
  ws(): WindowState {
    const s = this.thread.state()!;
    return (s.window ??= { ...NO_WINDOW, windows: {}, rounds: [], refusals: [] });
  }

  /** An engine with a session of its own writes its summaries itself; `pi`'s come from the curator model (by default the thread's own). */
  ownsSession(): boolean {
    return activeModel(this.thread.state()!).engine !== "pi";
  }

  /** The lines of the model turns run on now; null until its engine has told its window. */
  lines(): Lines | null {
    const window = this.read().windows[activeModel(this.thread.state()!).model];
    return window ? linesOf(window, this.settings()) : null;
  }

  /** What an engine that compacts on its own is told: the window and the warning line. */
  engineWindow(): TurnRequest["window"] {
    const lines = this.lines();
    return lines ? { tokens: lines.window, compactAt: lines.warnAt } : null;
  }

  /**
   * Tokens in the context: its size at the last count (a model call, a reduction), plus an
   * estimate of the transcript rows added since. Rows, not seqs: a message queued behind a
   * turn joins the transcript after that turn's entries with a lower seq.
   */
  tokens(): number {
    const base = this.read().base;
    // Every reduction moves the base to the newest row, so no reduction applies to the rows after it.
    return base ? base.tokens + estimateEntries(this.thread.tables.heldAfter(base.row)) : estimateEntries(this.thread.tables.context());
  }

  /** Whether the context, with the messages waiting for the next turn, is past the forced line. */
  forced(): boolean {
    const lines = this.lines();
    return lines !== null && this.tokens() + this.thread.tables.queuedTokens() > lines.forcedAt;
  }

  /** The engine's own prompt and tools, in tokens (WindowState.ownTokens); before any measure, the base less the transcript it held. */
  ownPrompt(): number {
    const { base, ownTokens } = this.read();
    if (ownTokens !== undefined) return ownTokens;
    return base ? this.heldBeyond(base) : 0;
  }

  private heldBeyond(base: { row: number; tokens: number }): number {
    return Math.max(0, base.tokens - estimateEntries(this.thread.tables.context().filter((h) => (h.row ?? 0) <= base.row)));
  }

  /**
   * The runtime's cut reaches an engine with a session of its own as a new session seeded
   * from the reduced transcript, which may hold much more than the session it replaces (one
   * the engine compacted): the context is counted as that new session would be.
   */
  async rebase(): Promise<void> {
    await this.thread.commits.write(() => {
      this.ws().base = { row: this.thread.tables.lastRow(), tokens: this.ownPrompt() + estimateEntries(this.thread.tables.context()) };
      this.thread.saveState();
    });
  }

  /** Inside the commit that starts a turn: whether its engine must start a new session from the reduced context (and no later turn need), and why. */
  takeReseed(): WindowState["reseed"] {
    const ws = this.thread.state()!.window;
    const reseed = ws?.reseed ?? false;
    if (ws) ws.reseed = false;
    if (ws && reseed) ws.summarized = false;
    return reseed;
  }

  /** After a recovery started a new session from the reduced context: the next turn need not start another. */
  async reseeded(): Promise<void> {
    await this.thread.commits.write(() => {
      if (!this.thread.state()!.window) return;
      this.ws().reseed = false;
      this.ws().summarized = false;
      this.thread.saveState();
    });
  }

  /**
   * Inside the commit that takes a failed turn's entries out of the transcript: the count
   * taken during the turn held them, so the context is counted again without them. A turn
   * that could not be made to fit (`overflowed`) leaves an engine's session holding what
   * did not fit: the next turn starts a new one instead of resuming it.
   */
  dropTurn(inputs: number[], startedSeq: number, overflowed: boolean): void {
    const own = this.ownPrompt();
    this.thread.tables.dropTurnEntries(inputs, startedSeq);
    if (!this.thread.state()!.window) return;
    const ws = this.ws();
    ws.base = { row: this.thread.tables.lastRow(), tokens: own + estimateEntries(this.thread.tables.context()) };
    if (overflowed) ws.reseed = "forced";
    this.thread.saveState();
  }

  /**
   * Inside the commit of a model call's `usage` event: the model's window, and (unless the
   * call was an engine's summary of its session, which is not the session's context) the
   * context's size as the provider counted it.
   */
  noteCall(report: UsageReport, sizesContext: boolean): void {
    const ws = this.ws();
    if (sizesContext) {
      ws.base = { row: this.thread.tables.lastRow(), tokens: report.contextTokens ?? report.inputTokens + report.outputTokens };
      if (!ws.summarized) ws.ownTokens = this.heldBeyond(ws.base);
    }
    if (report.contextWindow) ws.windows[report.model] = report.contextWindow;
  }

  status(): Outcome<CompactionStatus> {
    const s = this.thread.state();
    if (!s) return missing();
    const w = this.read();
    const lines = this.lines();
    const newest = this.thread.tables.windows().at(-1);
    const last = newest ? (({ upToRow: _, ...w }) => w)(newest) : null;
    return ok({
      tokens: lines || w.base ? this.tokens() : null,
      model: activeModel(s).model,
      window: lines?.window ?? null,
      warnAt: lines?.warnAt ?? null,
      forcedAt: lines?.forcedAt ?? null,
      pending: w.pending
        ? {
            seq: w.pending.seq,
            forced: w.pending.forced,
            tokens: w.pending.tokens,
            window: w.pending.window,
            options: w.pending.options,
            ...(w.pending.deadlineAt !== null ? { deadlineMs: w.pending.deadlineMs } : {}),
            deadlineAt: w.pending.deadlineAt !== null ? new Date(w.pending.deadlineAt).toISOString() : null,
          }
        : null,
      lastReduction: last,
      refusals: w.refusals,
    });
  }
}
