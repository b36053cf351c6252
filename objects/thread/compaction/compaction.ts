import type { CompactionMode, CompactionStatus, CompactResult, WindowRefusal, WindowTrigger } from "../../../src/api/compaction.js";
import type { TurnRequest } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { CHEAPEST_FIRST, thrashes, type Lines, type WindowSettings } from "../../../src/rules/compaction.js";
import { archivedRefusal, degradedRefusal, recordOnlyRefusal, missing } from "../refusals.js";
import { activeModel, type WindowState } from "../thread-state.js";
import type { UsageReport } from "../turn/events.js";
import { askEngine, type EngineThread } from "./engine.js";
import { ForcedWindow } from "./forced.js";
import { WindowRecords, type RecordsThread } from "./records.js";
import { Reductions, type ReductionsThread } from "./reductions.js";
import { CHEAP, compactionOptions, WindowMeter, type Recorded, type WindowThread } from "./window.js";

/** A turn's context that the provider refused: reduce harder than at the line. */
const RECUT: Partial<WindowSettings> = { keepToolResults: 1, keepTurns: 1 };

export const RECOVERING = (stage: "recut" | "resume-skipped" | "restarted") => `window full, recovering (${stage})`;

/** What compaction uses of its Thread: the union of its parts' slices. */
export type CompactionThread = WindowThread & RecordsThread & EngineThread & ReductionsThread;

/**
 * The context window of one Thread (docs/compaction.md): how full it is, the two lines,
 * the forced window's wait for a caller's choice, the reductions and their refusals.
 * Every reduction is a `window` event and a row in the windows table, written in one
 * commit; the engine's next context is the transcript with those rows applied. One
 * reduction runs at a time, and a turn starts only between them (`exclusive`), so an
 * engine's session is never compacted and resumed at once, and a forced window gets
 * exactly one disposition. The parts: the window's state and measure (`window.ts`), its
 * events (`records.ts`), the engine's own compaction (`engine.ts`), the reductions
 * (`reductions.ts`) and the lines before a turn (`forced.ts`).
 */
export class Compaction {
  private lock: Promise<unknown> = Promise.resolve();
  private readonly meter: WindowMeter;
  private readonly records: WindowRecords;
  private readonly reductions: Reductions;
  private readonly forcedWindow: ForcedWindow;

  constructor(
    private readonly thread: CompactionThread,
    /** A delegation's child has not answered: a cut (collapse, summary) waits for it (WindowBlocked). */
    private readonly delegationOpen: () => boolean,
  ) {
    const meter = (this.meter = new WindowMeter(thread));
    const records = (this.records = new WindowRecords(thread, meter));
    const ask = (trigger: WindowTrigger, turn: number) => askEngine(thread, meter, records, trigger, turn);
    const reductions = (this.reductions = new Reductions(thread, { meter, records, askEngine: ask, delegationOpen }));
    this.forcedWindow = new ForcedWindow(thread, { meter, records, reductions, askEngine: ask, delegationOpen, exclusive: (work) => this.exclusive(work) });
  }

  /** Runs `work` after every reduction (or turn start) before it, and before any after it. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => {});
    return run;
  }

  lines(): Lines | null {
    return this.meter.lines();
  }

  engineWindow(): TurnRequest["window"] {
    return this.meter.engineWindow();
  }

  tokens(): number {
    return this.meter.tokens();
  }

  takeReseed(): WindowState["reseed"] {
    return this.meter.takeReseed();
  }

  reseeded(): Promise<void> {
    return this.meter.reseeded();
  }

  dropTurn(inputs: number[], startedSeq: number, overflowed: boolean): void {
    this.meter.dropTurn(inputs, startedSeq, overflowed);
  }

  noteCall(report: UsageReport, sizesContext: boolean): void {
    this.meter.noteCall(report, sizesContext);
  }

  recordEngineCompaction(trigger: WindowTrigger, preTokens: number | undefined): Promise<Recorded> {
    return this.records.recordEngineCompaction(trigger, preTokens);
  }

  status(): Outcome<CompactionStatus> {
    return this.meter.status();
  }

  beforeTurn(): Promise<void> {
    return this.forcedWindow.beforeTurn();
  }

  forcedDeadline(): number | null {
    return this.forcedWindow.deadline();
  }

  /** `POST /threads/:id/compact`: reduces now, with the caller's mode or the runtime's choice, and settles a forced window. */
  async compact(mode: CompactionMode | undefined): Promise<Outcome<CompactResult>> {
    const s = this.thread.state();
    if (!s) return missing();
    const held = s.archivedAt ? archivedRefusal(s) : s.degraded ? degradedRefusal(s) : recordOnlyRefusal(s);
    if (held) return held;
    this.forcedWindow.claim();
    return this.exclusive(async (): Promise<Outcome<CompactResult>> => {
      const now = this.thread.state()!;
      const busy = this.meter.ownsSession() && now.turn !== null;
      if (mode === "summary" && busy)
        return refuse(409, `${activeModel(now).engine} is running a turn in the session it would compact; ask again when the turn ends`, CODES.engineBusy);
      const forced = this.meter.read().pending?.forced === true;
      // While a turn runs in the engine's session, the cheap kinds reach it with its next session.
      const modes = mode ? [mode] : busy ? CHEAP : this.forcedWindow.choice();
      const { done } = await this.reductions.reduce(modes, "request", now.turns + (now.turn ? 0 : 1), {}, forced);
      // What `reduce` refused as WindowBlocked: nothing ran, and a cut was among what the caller could have had.
      if (done.length === 0 && this.delegationOpen() && modes.some((m) => m !== "microcompact" && compactionOptions().includes(m))) return refuse(409, "a delegation of this thread has not answered: the context is not cut until its result has joined (WindowBlocked)", CODES.windowBlocked);
      if (forced) await this.records.dispose({ settledBy: "request", mode: mode ?? done.at(-1)?.kind ?? null });
      return ok({ reductions: done, tokens: this.meter.lines() ? this.meter.tokens() : null });
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
      if (thrashes(this.meter.read().rounds, turn, this.meter.settings())) {
        await this.records.thrash(turnId);
        return "WindowThrash";
      }
      await this.records.say("info", RECOVERING(stage), turnId);
      if (stage === "restarted") await this.meter.rebase();
      // Inside a turn an engine's session is busy: the cheap kinds, and a new session from them.
      const { done, summaryFailed } = await this.reductions.reduce(this.meter.ownsSession() ? CHEAP : CHEAPEST_FIRST, "recovery", turn, RECUT);
      if (done.length === 0 || this.meter.forced()) done.push(...(await this.reductions.reduce(["microcompact"], "recovery", turn, { keepToolResults: 0 })).done);
      if (done.length === 0 || this.meter.forced()) done.push(...(await this.reductions.dropOldest("recovery", turn, done, summaryFailed)));
      if (done.length > 0) return null;
      await this.records.noHeadroom(true, turnId);
      return "WindowNoHeadroom";
    });
  }
}
