import type { CompactionMode, WindowTrigger } from "../../../src/api/compaction.js";
import { CHEAPEST_FIRST, estimateEntries, planOf, savingOf, thrashes, type Lines } from "../../../src/rules/compaction.js";
import type { ThreadAccess } from "../thread-access.js";
import type { WindowRecords } from "./records.js";
import type { Reductions } from "./reductions.js";
import { CHEAP, compactionOptions, SUMMARY_TOKENS, type Recorded, type WindowMeter } from "./window.js";

/** What the lines' handling uses of its Thread. */
export type ForcedThread = Pick<ThreadAccess, "state" | "tables">;

/** What the lines' handling uses of the window's other parts. */
export interface ForcedParts {
  readonly meter: Pick<WindowMeter, "settings" | "read" | "lines" | "tokens" | "forced" | "ownsSession" | "ownPrompt" | "rebase">;
  readonly records: Pick<WindowRecords, "say" | "pend" | "dispose" | "thrash" | "noHeadroom">;
  readonly reductions: Pick<Reductions, "reduce" | "dropOldest">;
  askEngine(trigger: WindowTrigger, turn: number): Promise<Recorded | string>;
  delegationOpen(): boolean;
  /** One reduction (or turn start) at a time: the Compaction's lock. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The two lines before a turn: the warning, and the forced window's wait for a caller's
 * choice (`POST /compact`), then the runtime's own.
 */
export class ForcedWindow {
  /** Settles the forced window the next turn waits on, when a caller compacts first (memory only: a new instance waits out what is left of the deadline, from the alarm). */
  private settleForced: (() => void) | null = null;

  constructor(
    private readonly thread: ForcedThread,
    private readonly parts: ForcedParts,
  ) {}

  /**
   * The runtime's own choice: cheapest first; for an engine with a session of its own, that
   * engine's compaction (a new session from the runtime's cheap kinds would discard what it
   * compacted), the cheap kinds only when it fails or leaves the context forced.
   */
  choice(): readonly CompactionMode[] {
    return this.parts.meter.ownsSession() ? ["summary"] : CHEAPEST_FIRST;
  }

  /** The caller claims the forced window the next turn waits on: its deadline no longer runs. */
  claim(): void {
    this.settleForced?.();
  }

  /**
   * When the pending forced window's wait for a caller ends (from the thread's state), or
   * null: the turn driver's alarm starts the turn at that time if no instance is waiting it out.
   */
  deadline(): number | null {
    const pending = this.parts.meter.read().pending;
    return pending?.forced ? pending.deadlineAt : null;
  }

  /**
   * Before a turn starts: past the warning line a warning (and, for an engine with a session
   * of its own, its compaction while the session still has room for it); past the forced
   * line, a wait of up to the deadline for `POST /compact`, then the runtime's own choice.
   * Never throws for a refusal: the turn then runs as it is, and a provider that still
   * refuses is recovered from.
   */
  async beforeTurn(): Promise<void> {
    const { meter, records, reductions } = this.parts;
    const forced = await this.parts.exclusive(async () => {
      const lines = meter.lines();
      if (!lines) return false;
      const tokens = meter.tokens() + this.thread.tables.queuedTokens();
      if (tokens <= lines.warnAt) return false;
      const turn = this.thread.state()!.turns + 1;
      if (tokens <= lines.forcedAt) {
        if (!meter.read().pending) await records.pend(false, tokens, lines);
        // An engine's own compaction is a model call over its whole session: it needs the
        // room the warning line leaves, and at the forced line it may no longer fit.
        if (meter.ownsSession() && !thrashes(meter.read().rounds, turn, meter.settings())) {
          const compacted = await this.parts.askEngine("line", turn);
          if (typeof compacted === "string") await records.say("error", `the engine did not compact its session (${compacted})`);
        }
        return false;
      }
      if (!meter.read().pending?.forced) await records.pend(true, tokens, lines, this.callerCanChoose(lines));
      if (thrashes(meter.read().rounds, turn, meter.settings())) {
        await records.thrash();
        return false;
      }
      return true;
    });
    if (!forced) return;
    const pending = meter.read().pending;
    const atOnce = pending?.forced === true && pending.deadlineMs === 0;
    // Outside the lock: a caller's POST /compact takes it, and claims the window first.
    if (!atOnce) await this.waitForCaller(pending?.deadlineAt ?? Date.now());
    await this.parts.exclusive(async () => {
      const unsettled = meter.read().pending?.forced === true;
      // A caller settled it and made room: nothing more to do.
      if (!unsettled && !meter.forced()) return;
      const turn = this.thread.state()!.turns + 1;
      const trigger = unsettled && !atOnce ? "deadline" : "line";
      const { done, summaryFailed } = await reductions.reduce(this.choice(), trigger, turn, {}, true);
      // An engine's own summary that left the context forced: the cheap kinds, and a new session.
      if (meter.forced() && meter.ownsSession()) {
        await meter.rebase();
        done.push(...(await reductions.reduce(CHEAP, trigger, turn, {}, true)).done);
      }
      if (meter.forced()) done.push(...(await reductions.dropOldest(trigger, turn, done, summaryFailed)));
      // Still forced: settled as refused (a caller's request was recorded as theirs already).
      if (meter.forced()) await records.noHeadroom(false);
      else await records.dispose({ settledBy: atOnce ? "at-once" : "deadline", mode: done.at(-1)?.kind ?? null });
    });
  }

  /**
   * Whether `mode` alone, as a caller would ask it, would leave the next call room: what
   * its plan cuts, less what a summary is taken to put back. A cut waits for an open
   * delegation, so it fits nothing then.
   */
  private wouldFit(mode: CompactionMode, lines: Lines): boolean {
    const { meter } = this.parts;
    if (mode !== "microcompact" && this.parts.delegationOpen()) return false;
    const before = meter.tokens();
    const view = this.thread.tables.context();
    const after =
      mode === "summary" && meter.ownsSession()
        ? Math.min(before, meter.ownPrompt() + estimateEntries(view.filter((h) => h.entry.role === "user")) + SUMMARY_TOKENS)
        : before - savingOf(mode, view, planOf(mode, view, meter.settings()), mode === "summary" ? SUMMARY_TOKENS : 0);
    return after + this.thread.tables.queuedTokens() <= lines.forcedAt;
  }

  /**
   * A forced window is worth a wait only when the caller has a choice: two modes or more
   * that would each make room. With one (the runtime's choice reaches it anyway) or none
   * (only the runtime's last resort can), nobody's answer would change the outcome.
   */
  private callerCanChoose(lines: Lines): boolean {
    return compactionOptions().filter((m) => this.wouldFit(m, lines)).length >= 2;
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
}
