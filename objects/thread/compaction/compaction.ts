import {
  COMPACTION_MODES,
  type CompactionMode,
  type CompactionStatus,
  type CompactResult,
  type WindowBody,
  type WindowRefusal,
  type WindowKind,
  type WindowTrigger,
} from "../../../src/api/compaction.js";
import type { TurnRequest } from "../../../src/api/engine.js";
import { newId } from "../../../src/shared/ids.js";
import { TurnRunner } from "../turn/runner.js";
import { recordUsage, type UsageReport } from "../turn/events.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import {
  CHEAPEST_FIRST,
  DEFAULT_WINDOW_SETTINGS,
  dropEntry,
  estimateEntries,
  estimateEntry,
  linesOf,
  planDrop,
  planOf,
  rangesOf,
  savingOf,
  summaryEntry,
  summarySource,
  targetOf,
  thrashes,
  type Lines,
  type WindowSettings,
} from "../../../src/rules/compaction.js";
import { turnAccount } from "../../../src/rules/accounts.js";
import { curatorSummary } from "./curator.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { archivedRefusal, degradedRefusal, missing, recordOnlyRefusal } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import { activeModel, runKey, seatNamed, type WindowState } from "../thread-state.js";

/** Reductions kept for WindowThrash's count, and refusals for `GET /compact`. */
const KEPT = 10;

/** What a summary is taken to hold before it is written (an engine's own, until its next call says). */
const SUMMARY_TOKENS = 500;

/** The kinds that cut the runtime's transcript, without a model. */
const CHEAP: readonly CompactionMode[] = ["microcompact", "collapse"];

const NO_WINDOW: Readonly<WindowState> = { windows: {}, base: null, pending: null, rounds: [], reseed: false, refusals: [] };

type Recorded = WindowBody & { seq: number };

/** A turn's context that the provider refused: reduce harder than at the line. */
const RECUT: Partial<WindowSettings> = { keepToolResults: 1, keepTurns: 1 };

export const RECOVERING = (stage: "recut" | "resume-skipped" | "restarted") => `window full, recovering (${stage})`;

/**
 * The context window of one Thread (docs/compaction.md): how full it is, the two lines,
 * the forced window's wait for a caller's choice, the reductions and their refusals.
 * Every reduction is a `window` event and a row in the windows table, written in one
 * commit; the engine's next context is the transcript with those rows applied. One
 * reduction runs at a time, and a turn starts only between them (`exclusive`), so an
 * engine's session is never compacted and resumed at once, and a forced window gets
 * exactly one disposition.
 */
export class Compaction {
  /** Settles the forced window the next turn waits on, when a caller compacts first (memory only: a new instance waits out what is left of the deadline, from the alarm). */
  private settleForced: (() => void) | null = null;
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly thread: ThreadAccess,
    /** A delegation's child has not answered: a cut (collapse, summary) waits for it (WindowBlocked). */
    private readonly delegationOpen: () => boolean,
  ) {}

  /** Runs `work` after every reduction (or turn start) before it, and before any after it. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => {});
    return run;
  }

  private settings(over: Partial<WindowSettings> = {}): WindowSettings {
    const c = this.thread.config;
    return { ...DEFAULT_WINDOW_SETTINGS, warnRatio: c.windowWarnPercent / 100, reserveTokens: c.windowReserveTokens, ...over };
  }

  /** The window's bookkeeping, to read. */
  private read(): Readonly<WindowState> {
    return this.thread.state()?.window ?? NO_WINDOW;
  }

  /** The window's bookkeeping, to change: only inside a commit, then saveState. */
  private ws(): WindowState {
    const s = this.thread.state()!;
    return (s.window ??= { ...NO_WINDOW, windows: {}, rounds: [], refusals: [] });
  }

  /** An engine with a session of its own writes its summaries itself; `pi`'s come from the curator model (by default the thread's own). */
  private ownsSession(): boolean {
    return activeModel(this.thread.state()!).engine !== "pi";
  }

  /** The modes `POST /compact` takes: every one, as some model can always be asked for a summary. */
  private options(): CompactionMode[] {
    return [...COMPACTION_MODES];
  }

  /**
   * Whether `mode` alone, as a caller would ask it, would leave the next call room: what
   * its plan cuts, less what a summary is taken to put back. A cut waits for an open
   * delegation, so it fits nothing then.
   */
  private wouldFit(mode: CompactionMode, lines: Lines): boolean {
    if (mode !== "microcompact" && this.delegationOpen()) return false;
    const before = this.tokens();
    const view = this.thread.tables.context();
    const after =
      mode === "summary" && this.ownsSession()
        ? Math.min(before, this.ownPrompt() + estimateEntries(view.filter((h) => h.entry.role === "user")) + SUMMARY_TOKENS)
        : before - savingOf(mode, view, planOf(mode, view, this.settings()), mode === "summary" ? SUMMARY_TOKENS : 0);
    return after + this.thread.tables.queuedTokens() <= lines.forcedAt;
  }

  /**
   * A forced window is worth a wait only when the caller has a choice: two modes or more
   * that would each make room. With one (the runtime's choice reaches it anyway) or none
   * (only the runtime's last resort can), nobody's answer would change the outcome.
   */
  private callerCanChoose(lines: Lines): boolean {
    return this.options().filter((m) => this.wouldFit(m, lines)).length >= 2;
  }

  /**
   * The runtime's own choice: cheapest first; for an engine with a session of its own, that
   * engine's compaction (a new session from the runtime's cheap kinds would discard what it
   * compacted), the cheap kinds only when it fails or leaves the context forced.
   */
  private choice(): readonly CompactionMode[] {
    return this.ownsSession() ? ["summary"] : CHEAPEST_FIRST;
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

  /** The engine's own prompt and tools, in tokens (WindowState.ownTokens); before any measure, the base less the transcript it held. */
  private ownPrompt(): number {
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
  private async rebase(): Promise<void> {
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

  /**
   * The engine compacted its own session (asked, or on its own mid-turn): a `summary`
   * window the engine's model wrote, cutting nothing of the runtime's transcript. What its
   * session holds after is estimated (its own prompt, the user's messages, a summary's
   * worth) until its next call says.
   */
  async recordEngineCompaction(trigger: WindowTrigger, preTokens: number | undefined): Promise<Recorded> {
    const s = this.thread.state()!;
    const before = preTokens ?? this.tokens();
    const users = estimateEntries(this.thread.tables.context().filter((h) => h.entry.role === "user"));
    const after = Math.min(before, this.ownPrompt() + users + SUMMARY_TOKENS);
    const body: WindowBody = { kind: "summary", cut: [], tokensBefore: before, tokensAfter: after, trigger, summaryModel: activeModel(s).model };
    const prepared = await this.thread.log.prepare("window", body);
    const seq = await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.thread.tables.addWindow(e.seq, body);
      const ws = this.ws();
      ws.base = { row: this.thread.tables.lastRow(), tokens: after };
      ws.summarized = true;
      if (ws.pending && !ws.pending.forced) ws.pending = null;
      this.thread.saveState();
      return e.seq;
    });
    return { seq, ...body };
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

  /**
   * Before a turn starts: past the warning line a warning (and, for an engine with a session
   * of its own, its compaction while the session still has room for it); past the forced
   * line, a wait of up to the deadline for `POST /compact`, then the runtime's own choice.
   * Never throws for a refusal: the turn then runs as it is, and a provider that still
   * refuses is recovered from.
   */
  async beforeTurn(): Promise<void> {
    const forced = await this.exclusive(async () => {
      const lines = this.lines();
      if (!lines) return false;
      const tokens = this.tokens() + this.thread.tables.queuedTokens();
      if (tokens <= lines.warnAt) return false;
      const turn = this.thread.state()!.turns + 1;
      if (tokens <= lines.forcedAt) {
        if (!this.read().pending) await this.pend(false, tokens, lines);
        // An engine's own compaction is a model call over its whole session: it needs the
        // room the warning line leaves, and at the forced line it may no longer fit.
        if (this.ownsSession() && !thrashes(this.read().rounds, turn, this.settings())) {
          const compacted = await this.askEngine("line", turn);
          if (typeof compacted === "string") await this.say("error", `the engine did not compact its session (${compacted})`);
        }
        return false;
      }
      if (!this.read().pending?.forced) await this.pend(true, tokens, lines, this.callerCanChoose(lines));
      if (thrashes(this.read().rounds, turn, this.settings())) {
        await this.thrash();
        return false;
      }
      return true;
    });
    if (!forced) return;
    const pending = this.read().pending;
    const atOnce = pending?.forced === true && pending.deadlineMs === 0;
    // Outside the lock: a caller's POST /compact takes it, and claims the window first.
    if (!atOnce) await this.waitForCaller(pending?.deadlineAt ?? Date.now());
    await this.exclusive(async () => {
      const unsettled = this.read().pending?.forced === true;
      // A caller settled it and made room: nothing more to do.
      if (!unsettled && !this.forced()) return;
      const turn = this.thread.state()!.turns + 1;
      const trigger = unsettled && !atOnce ? "deadline" : "line";
      const { done, summaryFailed } = await this.reduce(this.choice(), trigger, turn, {}, true);
      // An engine's own summary that left the context forced: the cheap kinds, and a new session.
      if (this.forced() && this.ownsSession()) {
        await this.rebase();
        done.push(...(await this.reduce(CHEAP, trigger, turn, {}, true)).done);
      }
      if (this.forced()) done.push(...(await this.dropOldest(trigger, turn, done, summaryFailed)));
      // Still forced: settled as refused (a caller's request was recorded as theirs already).
      if (this.forced()) await this.noHeadroom(false);
      else await this.dispose({ settledBy: atOnce ? "at-once" : "deadline", mode: done.at(-1)?.kind ?? null });
    });
  }

  /** `POST /threads/:id/compact`: reduces now, with the caller's mode or the runtime's choice, and settles a forced window. */
  async compact(mode: CompactionMode | undefined): Promise<Outcome<CompactResult>> {
    const s = this.thread.state();
    if (!s) return missing();
    const held = s.archivedAt ? archivedRefusal(s) : s.degraded ? degradedRefusal(s) : recordOnlyRefusal(s);
    if (held) return held;
    // The caller claims the forced window the next turn waits on: its deadline no longer runs.
    this.settleForced?.();
    return this.exclusive(async (): Promise<Outcome<CompactResult>> => {
      const now = this.thread.state()!;
      const busy = this.ownsSession() && now.turn !== null;
      if (mode === "summary" && busy)
        return refuse(409, `${activeModel(now).engine} is running a turn in the session it would compact; ask again when the turn ends`, CODES.engineBusy);
      const forced = this.read().pending?.forced === true;
      // While a turn runs in the engine's session, the cheap kinds reach it with its next session.
      const modes = mode ? [mode] : busy ? CHEAP : this.choice();
      const { done } = await this.reduce(modes, "request", now.turns + (now.turn ? 0 : 1), {}, forced);
      // What `reduce` refused as WindowBlocked: nothing ran, and a cut was among what the caller could have had.
      if (done.length === 0 && this.delegationOpen() && modes.some((m) => m !== "microcompact" && this.options().includes(m))) return refuse(409, "a delegation of this thread has not answered: the context is not cut until its result has joined (WindowBlocked)", CODES.windowBlocked);
      if (forced) await this.dispose({ settledBy: "request", mode: mode ?? done.at(-1)?.kind ?? null });
      return ok({ reductions: done, tokens: this.lines() ? this.tokens() : null });
    });
  }

  /**
   * The provider refused a running turn's context as too long: reduce harder, within the
   * turn, and say so. Null when the turn can go on; the refusal when it cannot. The
   * newest tool result is stubbed too when nothing else makes room: one output larger
   * than the window would otherwise end every turn after it.
   */
  recover(turnId: string, stage: "recut" | "restarted"): Promise<WindowRefusal | null> {
    return this.exclusive(async () => {
      const turn = this.thread.state()!.turns;
      if (thrashes(this.read().rounds, turn, this.settings())) {
        await this.thrash(turnId);
        return "WindowThrash";
      }
      await this.say("info", RECOVERING(stage), turnId);
      if (stage === "restarted") await this.rebase();
      // Inside a turn an engine's session is busy: the cheap kinds, and a new session from them.
      const { done, summaryFailed } = await this.reduce(this.ownsSession() ? CHEAP : CHEAPEST_FIRST, "recovery", turn, RECUT);
      if (done.length === 0 || this.forced()) done.push(...(await this.reduce(["microcompact"], "recovery", turn, { keepToolResults: 0 })).done);
      if (done.length === 0 || this.forced()) done.push(...(await this.dropOldest("recovery", turn, done, summaryFailed)));
      if (done.length > 0) return null;
      await this.noHeadroom(true, turnId);
      return "WindowNoHeadroom";
    });
  }

  /**
   * When the pending forced window's wait for a caller ends (from the thread's state), or
   * null: the turn driver's alarm starts the turn at that time if no instance is waiting it out.
   */
  forcedDeadline(): number | null {
    const pending = this.read().pending;
    return pending?.forced ? pending.deadlineAt : null;
  }

  private forced(): boolean {
    const lines = this.lines();
    return lines !== null && this.tokens() + this.thread.tables.queuedTokens() > lines.forcedAt;
  }

  private waitForCaller(deadlineAt: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.settleForced = null;
        resolve();
      }, Math.max(0, deadlineAt - Date.now()));
      this.settleForced = () => {
        clearTimeout(timer);
        this.settleForced = null;
        resolve();
      };
    });
  }

  /** A line crossed: `waits`, for a forced one, whether the caller's choice is waited for (else its deadline is 0). */
  private async pend(forced: boolean, tokens: number, lines: Lines, waits = true): Promise<void> {
    const deadlineMs = waits ? this.thread.config.windowDeadlineMs : 0;
    const options = this.options();
    const body = { forced, tokens, window: lines.window, ...(forced ? { deadlineMs } : {}), options };
    const prepared = await this.thread.log.prepare("window-pending", body);
    await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.ws().pending = { seq: e.seq, forced, tokens, window: lines.window, deadlineMs, deadlineAt: forced ? Date.now() + deadlineMs : null, options };
      this.thread.saveState();
    });
    // The wait below is this instance's: an eviction takes it along, the alarm does not.
    if (forced) await this.thread.reschedule();
  }

  /** Settles the forced window, once: a window already settled gets no second disposition. */
  private async dispose(body: { settledBy: "request" | "deadline" | "at-once"; mode: WindowKind | null }): Promise<void> {
    const prepared = await this.thread.log.prepare("compaction-disposition", body);
    await this.thread.commits.write(() => {
      if (!this.read().pending?.forced) return;
      this.thread.append(prepared);
      this.ws().pending = null;
      this.thread.saveState();
    });
  }

  private thrash(turnId?: string): Promise<void> {
    return this.refuse("WindowThrash", `WindowThrash: ${this.read().rounds.length} reductions in the last turns; the runtime stops reducing instead of looping`, true, turnId);
  }

  private noHeadroom(inTurn: boolean, turnId?: string): Promise<void> {
    const lines = this.lines();
    const text = `WindowNoHeadroom: after every reduction the context still takes ${this.tokens()} of ${lines?.window ?? "?"} tokens; what cannot be cut (the system prompt, tools, the user messages kept verbatim, the current request) leaves no room for the answer`;
    return this.refuse("WindowNoHeadroom", text, !inTurn, turnId);
  }

  /** A refusal: a system line, kept for `GET /compact`, and (`settlesForced`) a forced window settled as refused. */
  private async refuse(refusal: WindowRefusal, text: string, settlesForced: boolean, turnId?: string): Promise<void> {
    const line = await this.thread.log.prepare("system", { level: "error", text, ...(turnId ? { turnId } : {}) });
    const disposition = settlesForced ? await this.thread.log.prepare("compaction-disposition", { settledBy: "refused", mode: null, refusal }) : null;
    await this.thread.commits.write(() => {
      const e = this.thread.append(line);
      const ws = this.ws();
      if (disposition && ws.pending?.forced) {
        this.thread.append(disposition);
        ws.pending = null;
      }
      ws.refusals = [...ws.refusals, { seq: e.seq, ts: e.ts, refusal, text }].slice(-KEPT);
      this.thread.saveState();
    });
  }

  /**
   * Runs `modes` in order until the context, with the messages waiting for the next turn,
   * is under the target; each that cuts something is one `window` event. A summary that no
   * model wrote cuts nothing: the cheap kinds not yet run take its place, their events
   * saying why (`summaryFailed`). `forcedWindow`: the reduction settles a forced window, so
   * an engine's next session replaces one too full to resume (`resume-skipped`). Answers
   * the reductions, and why no summary was written when one was asked and failed.
   */
  private async reduce(modes: readonly CompactionMode[], trigger: WindowTrigger, turn: number, over: Partial<WindowSettings> = {}, forcedWindow = false): Promise<{ done: Recorded[]; summaryFailed?: string }> {
    const settings = this.settings(over);
    const lines = this.lines();
    const done: Recorded[] = [];
    const queue = [...modes];
    let summaryFailed: string | undefined;
    // A summary nobody wrote gives way to the cheap kinds not run yet, saying why.
    const insteadOfSummary = async (why: string, line: string) => {
      summaryFailed = why;
      await this.say("error", `${line} (${why}); the cheap reductions run instead`);
      queue.push(...CHEAP.filter((k) => !done.some((d) => d.kind === k) && !queue.includes(k)));
    };
    const under = (tokens: number) => lines !== null && tokens + this.thread.tables.queuedTokens() <= targetOf(lines);
    let blocked = false;
    for (let kind = queue.shift(); kind; kind = queue.shift()) {
      if (!this.options().includes(kind)) continue;
      // Stubbing tool outputs keeps the conversation's shape; a cut would take the delegation's context before its result joins.
      if (kind !== "microcompact" && this.delegationOpen()) {
        blocked = true;
        continue;
      }
      if (kind === "summary" && this.ownsSession()) {
        const compacted = await this.askEngine(trigger, turn);
        if (typeof compacted !== "string") {
          done.push(compacted);
          // What the runtime's cheap kinds would add is a new session, which discards this one.
          break;
        }
        await insteadOfSummary(compacted, "the engine did not compact its session");
        continue;
      }
      const view = this.thread.tables.context();
      const cut = planOf(kind, view, settings);
      if (cut.size === 0) continue;
      const before = this.tokens();
      let body: WindowBody;
      if (kind === "summary") {
        const written = await curatorSummary(this.thread, summarySource(view, cut).map((h) => h.entry));
        if ("error" in written) {
          await insteadOfSummary(written.error, "no model wrote the summary");
          continue;
        }
        const added = estimateEntry(summaryEntry(rangesOf(view, cut), written.summary));
        body = { kind, cut: rangesOf(view, cut), tokensBefore: before, tokensAfter: Math.max(0, before - savingOf(kind, view, cut, added)), trigger, summaryModel: written.model, summary: written.summary };
      } else {
        body = { kind, cut: rangesOf(view, cut), tokensBefore: before, tokensAfter: Math.max(0, before - savingOf(kind, view, cut)), trigger, ...(summaryFailed ? { summaryFailed } : {}) };
      }
      done.push(await this.record(body, turn, done.length === 0, forcedWindow));
      if (under(body.tokensAfter)) break;
    }
    if (blocked && done.length === 0)
      await this.refuse("WindowBlocked", "WindowBlocked: a delegation of this thread has not answered; the context is not cut until its result has joined", forcedWindow, undefined);
    return { done, ...(summaryFailed ? { summaryFailed } : {}) };
  }

  /**
   * The last resort, when the runtime's choice (a summary among it) left the context
   * forced: the oldest turns leave it whole until it is under the target; a running turn
   * (inside a recovery) keeps everything from its first input on, since it goes on from
   * them. A system line names the cut seqs and why no summary did it: `summaryFailed`,
   * else what `before` (this round's reductions so far) shows.
   */
  private async dropOldest(trigger: WindowTrigger, turn: number, before: readonly Recorded[], summaryFailed: string | undefined): Promise<Recorded[]> {
    const lines = this.lines();
    // A cut waits for an open delegation's result; the kinds before this one said so (WindowBlocked).
    if (!lines || this.delegationOpen()) return [];
    const view = this.thread.tables.context();
    const tokens = this.tokens();
    // In a recovery the provider refused what the count says fits: at least one turn goes.
    const excess = tokens + this.thread.tables.queuedTokens() - targetOf(lines);
    const cut = planDrop(view, trigger === "recovery" ? Math.max(1, excess) : excess, this.runningFrom());
    if (cut.size === 0) return [];
    const ranges = rangesOf(view, cut);
    const why = summaryFailed ?? (before.some((w) => w.kind === "summary") ? "the summary left too little room" : "no summary could make room");
    const body: WindowBody = { kind: "drop", cut: ranges, tokensBefore: tokens, tokensAfter: Math.max(0, tokens - savingOf("drop", view, cut, estimateEntry(dropEntry(ranges)))), trigger, summaryFailed: why };
    const recorded = await this.record(body, turn, before.length === 0, trigger !== "recovery");
    // Said once the cut is committed: a record that fails must not leave a line announcing it.
    const seqs = ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
    await this.say("error", `the oldest turns left the context to make room (events ${seqs}; ${why})`);
    return [recorded];
  }

  /**
   * The transcript row of the running turn's first input. Read from the transcript as
   * recorded, so a reduction that already cut that message still bounds the drop; its
   * steering messages are inputs too, but join later. Undefined with no turn running, or
   * none of its messages in the transcript.
   */
  private runningFrom(): number | undefined {
    const inputs = new Set(this.thread.state()!.turn?.inputs ?? []);
    if (inputs.size === 0) return undefined;
    return this.thread.tables.held().find((h) => inputs.has(h.seq) && h.entry.role === "user")?.row;
  }

  /**
   * One reduction, in one commit: its `window` event, its row, the new count. `newRound`:
   * the first of a round (WindowThrash counts rounds). `forcedWindow`: it settles a forced
   * window, so an engine's next session replaces one too full to resume.
   */
  private async record(body: WindowBody, turn: number, newRound: boolean, forcedWindow: boolean): Promise<Recorded> {
    const prepared = await this.thread.log.prepare("window", body);
    const seq = await this.thread.commits.write(() => {
      const e = this.thread.append(prepared);
      this.thread.tables.addWindow(e.seq, body);
      const ws = this.ws();
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

  /**
   * Asks the thread's engine to compact its own session: the `window` it recorded, or why
   * it did not. Bounded by the curator's timeout (twice: the engine's process starts first).
   */
  private async askEngine(trigger: WindowTrigger, turn: number): Promise<Recorded | string> {
    const c = this.thread.config;
    const s = this.thread.state()!;
    const active = activeModel(s);
    // The engine's session is the last turn's seat's: the holder's next turn starts a new
    // one anyway when that was another seat or model (docs/seats.md), so there is nothing to compact.
    const holder = seatNamed(s, s.holder)!;
    if (s.lastRun !== undefined && s.lastRun !== runKey(s, holder)) return `the engine's session is another seat's or model's (${s.lastRun.split("|")[0]}), not seat ${holder.name}'s`;
    const id = newId("cmp_");
    const request: TurnRequest = {
      turnId: id,
      threadId: s.id,
      ...active,
      permissions: s.spec.permissions,
      cwd: s.spec.cwd,
      ...(s.spec.type === "build" ? { buildFence: true as const } : {}),
      ...(s.spec.worktree ? { worktree: s.spec.worktree } : {}),
      ...turnAccount(c, s.spec, active.engine, active.model),
      proxyEnv: s.spec.proxyEnv,
      transcript: [],
      freshSession: false,
      window: this.engineWindow(),
      inputs: [],
      handoffTo: [],
      delegated: false,
      compact: true,
    };
    let response: Response;
    try {
      response = await callEngine(this.thread.env, "/turns", request);
    } catch (err) {
      return `the engine host could not be reached: ${(err as Error).message}`;
    }
    if (!response.ok) return ((await response.json().catch(() => ({}))) as { error?: string }).error ?? `the engine host answered ${response.status}`;
    let window: Recorded | null = null;
    const runner = new TurnRunner(id);
    const limit = 2 * c.curatorTimeoutMs;
    const timer = setTimeout(() => runner.cancel({ class: "session", error: `the engine's compaction did not end within ${limit} ms` }), limit);
    const end = await runner.run(response, {
      delta: () => {},
      durable: async (report) => {
        if (report.type === "usage") await recordUsage(this.thread, id, report, () => this.noteCall(report, false));
        else if (report.type === "compacted") window = await this.recordEngineCompaction(trigger, report.preTokens);
      },
    });
    clearTimeout(timer);
    if (!window) return end.failure?.error ?? "the engine ended without compacting";
    await this.thread.commits.write(() => {
      const ws = this.ws();
      ws.rounds = [...ws.rounds, turn].slice(-KEPT);
      this.thread.saveState();
    });
    return window;
  }

  private async say(level: "info" | "error", text: string, turnId?: string): Promise<void> {
    const prepared = await this.thread.log.prepare("system", { level, text, ...(turnId ? { turnId } : {}) });
    await this.thread.commits.write(() => {
      this.thread.append(prepared);
    });
  }
}
