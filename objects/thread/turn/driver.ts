import type { MessageAccepted, ThreadSpec } from "../../../src/api/threads.js";
import { CODES } from "../../../src/api/errors.js";
import type { TurnStatus } from "../../../src/api/turns.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { hostOf } from "../../../src/platform/stubs.js";
import type { AlarmPart } from "../../lib/alarm-schedule.js";
import { missing, runsTurns } from "../refusals.js";
import { restage, type ThreadAccess } from "../thread-access.js";
import { seatNamed, type SeatState, type ThreadState } from "../thread-state.js";
import { TurnEnding, type EndParts } from "./end.js";
import { TurnSlot } from "./live.js";
import type { TurnResult } from "../../../src/api/turns.js";
import { Reports } from "./reports.js";
import { TurnStart, type StartParts } from "./start.js";
import { Steering } from "./steering.js";
import type { Routed } from "./tables.js";

/**
 * While a turn runs, an alarm fires this often. An object with no incoming requests may
 * be evicted after about a minute even while it waits on the engine (a person may take
 * long to approve); the alarm counts as activity and keeps the turn's stream alive.
 */
const KEEPALIVE_MS = 30_000;

/** How long a turn that could not start waits before the next try. */
const START_RETRY_MS = 2000;

/** The Thread's parts a turn reaches, built by the Thread: each turn part is handed only what it uses of them. */
export interface TurnParts {
  readonly waits: EndParts["waits"] & StartParts["waits"];
  readonly loops: EndParts["loops"];
  readonly compaction: EndParts["compaction"] & StartParts["compaction"] & { forcedDeadline(): number | null };
}

/**
 * The turns of one Thread: it builds their parts (the start in `start.ts`, the run in
 * `run.ts`, the end in `end.ts`, steering, the reports to a parent and a room), hands
 * each only the slice it uses of the Thread and of the Thread's parts (`TurnParts`), and
 * decides when a turn starts. The Thread creates this and hands it only `ThreadAccess`; every write
 * still goes through the Thread's commit queue.
 */
export class TurnDriver {
  private readonly compaction: TurnParts["compaction"];
  private readonly slot = new TurnSlot();
  private readonly steering: Steering;
  private readonly reports: Reports;
  private readonly ending: TurnEnding;
  private readonly starter: TurnStart;
  /** When a turn that could not start is tried again. */
  private startRetryAt: number | null = null;
  /** This instance started turns (or tried): before that, queued messages are a last instance's, and nothing runs them. */
  private kicked = false;

  /** While a turn runs, the alarm comes every KEEPALIVE_MS, which keeps the object alive. */
  readonly keepAliveAlarm: AlarmPart = {
    name: "keep-alive",
    nextDueAt: () => (this.state?.turn && this.slot.keptAt !== null ? this.slot.keptAt + KEEPALIVE_MS : null),
    runDue: async (now) => void (this.slot.keptAt = now),
  };

  /**
   * Queued messages with no turn that takes them: at a forced window's deadline (kept in
   * the state, so a new instance that did not wait it out starts the turn then), after a
   * start that failed, or at once in a new instance that started nothing yet (whatever
   * would have started them went with the last one).
   */
  readonly startAlarm: AlarmPart = {
    name: "turn start",
    nextDueAt: () => {
      const s = this.state;
      if (!s || s.turn || s.degraded || s.archivedAt || !runsTurns(s) || this.thread.tables.queued() === 0) return null;
      const deadline = this.compaction.forcedDeadline();
      // A start under way waits out the window itself; the alarm covers it being lost with the instance.
      if (this.slot.starting || this.slot.live) return deadline !== null && deadline > Date.now() ? deadline : null;
      return deadline ?? this.startRetryAt ?? (this.kicked ? null : Date.now());
    },
    runDue: async () => this.kick(),
  };

  /** A delegation's outcome the parent has not taken: at once in a new instance, else after a failed hand-over. */
  readonly reportAlarm: AlarmPart;

  constructor(
    private readonly thread: ThreadAccess,
    parts: TurnParts,
  ) {
    const { waits, loops, compaction } = parts;
    this.compaction = compaction;
    const kick = () => this.kick();
    this.steering = new Steering(thread, { slot: this.slot, kick });
    this.reports = new Reports(thread, this.slot);
    this.reportAlarm = this.reports.alarm;
    this.ending = new TurnEnding(thread, { waits, loops, compaction, steering: this.steering, reports: this.reports, kick }, this.slot);
    this.starter = new TurnStart(
      thread,
      { compaction, waits, steering: this.steering, ending: this.ending, route: (named, from) => this.route(named, from) },
      this.slot,
    );
  }

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  /** The end of the turn that takes the message at `seq`, for `/send`. */
  answer(seq: number): Promise<Outcome<TurnResult>> {
    return this.slot.answer(seq);
  }

  turnStatus(): Outcome<TurnStatus> {
    const s = this.state;
    if (!s) return missing();
    const waits = s.turn ? this.thread.tables.openWaits(s.turn.id) : [];
    return ok({
      running: s.turn !== null,
      turn: s.turn ? { turnId: s.turn.id, index: s.turn.index, startedAt: s.turn.startedAt, inputs: s.turn.inputs } : null,
      waitingOn: {
        approvals: waits.filter((w) => w.kind === "approval").map((w) => w.id),
        questions: waits.filter((w) => w.kind === "question").map((w) => w.id),
      },
      queued: this.thread.tables.queued(),
    });
  }

  /**
   * Asks the engine to stop the running turn and waits for the turn to end. An engine
   * that does not stop within the grace time has its report stream cut: the turn ends
   * here either way, with class `interrupted`.
   */
  async interrupt(): Promise<Outcome<TurnResult>> {
    if (!this.state) return missing();
    // The row says running from its commit on; the engine's stream comes a moment later.
    if (this.slot.starting) await this.slot.start;
    const live = this.slot.live;
    if (!this.state.turn || !live) return refuse(409, "no turn is running on this thread", CODES.noTurnRunning);
    const timer = setTimeout(
      () => live.runner.cancel({ class: "interrupted", error: "interrupted (the engine did not stop in time; the turn was cut)" }),
      this.thread.config.interruptGraceMs,
    );
    const cut = () => live.runner.cancel({ class: "interrupted", error: "interrupted (the engine could not be reached; the turn was cut)" });
    void callEngine(this.thread.env, `/turns/${live.id}/interrupt`, {}).then((r) => (r.ok ? undefined : cut()), cut);
    const end = await live.done;
    clearTimeout(timer);
    return ok({ turnId: live.id, outcome: end.outcome, failure: end.failure ?? null, reply: live.lastReply });
  }

  /**
   * Ends the running turn as `closed` (SPEC: a session closed on purpose, never retried) to
   * free its session under the live-session cap. Cutting the report stream makes the
   * engine host stop the engine's process; the thread and its log stay as they are.
   */
  async evict(why: string, idleMs: number): Promise<Outcome<TurnResult>> {
    if (!this.state) return missing();
    if (this.slot.starting) await this.slot.start;
    const live = this.slot.live;
    if (!this.state.turn || !live) return refuse(409, "no turn is running on this thread", CODES.noTurnRunning);
    // Decided here, not on the catalog's word: the person may have answered a moment ago.
    const waits = this.thread.tables.openWaits(live.id);
    const since = Math.max(...waits.map((w) => Date.parse(this.thread.log.get(w.seq)?.ts ?? "") || Date.now()));
    if (waits.length === 0 || Date.now() - since < idleMs) return refuse(409, "the turn is not idle: it does not wait on a person, or not long enough", CODES.turnNotIdle);
    live.runner.cancel({ class: "closed", error: why });
    const end = await live.done;
    return ok({ turnId: live.id, outcome: end.outcome, failure: end.failure ?? null, reply: live.lastReply });
  }

  /** Reopens a degraded thread; the history that could not be saved stays missing. */
  async recover(reason: string): Promise<Outcome<MessageAccepted>> {
    const notDegraded = (s: ThreadState) => (s.degraded ? null : refuse(409, `thread ${s.id} is not degraded`, CODES.threadNotDegraded));
    const outcome = await this.thread.change("recovered", { reason, acknowledgeHistoryGap: true }, notDegraded, (s) => {
      s.degraded = null;
      restage(this.thread);
    });
    if (outcome.ok) this.kick();
    return outcome;
  }

  /** What a fork at `atSeq` continues from: the spec and the conversation up to there (JSON text). */
  forkSource(atSeq: number): Outcome<{ spec: ThreadSpec; transcript: string }> {
    if (!this.state) return missing();
    const log = this.thread.log;
    if (atSeq > log.durableSeq)
      return refuse(400, `atSeq ${atSeq} is beyond the thread's last event (${log.durableSeq})`, CODES.forkSeqOutOfRange);
    return ok({ spec: this.state.spec, transcript: JSON.stringify(this.thread.tables.transcript(atSeq + 1)) });
  }

  /**
   * Boot sweep: activates this thread, which records a lost turn, and starts the turn of
   * messages that were accepted but had not started when the host went down.
   */
  async reconcile(): Promise<{ running: boolean }> {
    const s = this.state;
    if (s && !s.turn) {
      if (this.thread.tables.queued() > 0 && !s.degraded && !s.archivedAt) this.kick();
      else await hostOf(this.thread.env).turnEnded(s.id);
    }
    return { running: s?.turn != null || this.slot.starting };
  }

  /** Starts the next turn if none runs and messages wait. Never throws: failures are recorded. */
  kick(): void {
    this.kicked = true;
    const s = this.state;
    if (this.slot.starting || this.slot.live || !s || s.turn || s.degraded || s.archivedAt || !runsTurns(s)) return;
    if (this.thread.tables.queued() === 0) return;
    this.slot.starting = true;
    this.startRetryAt = null;
    this.slot.start = this.starter.start().then(
      () => {
        this.slot.starting = false;
        // A message committed while this start was finishing (it took the inbox, then found
        // nothing to run here and told the Host) had its kick refused by `starting`.
        this.kick();
      },
      (err: unknown) => {
        this.slot.starting = false;
        // The messages are still queued: try again shortly rather than wait for the next one.
        console.error(`thread ${this.state?.id}: a turn could not start (retrying):`, err);
        this.startRetryAt = Date.now() + START_RETRY_MS;
        void this.thread.reschedule();
      },
    );
  }

  /**
   * Ends the running turn of a removed seat with class `closed` (never retried) and waits
   * for it to end; nothing when that seat is not running a turn.
   */
  async closeSeat(name: string, why: string): Promise<void> {
    if (this.slot.starting) await this.slot.start;
    const live = this.slot.live;
    if (!live || live.seat !== name) return;
    live.runner.cancel({ class: "closed", error: why });
    await live.done;
  }

  /**
   * The seat a queued message goes to: the one it named while that seat is active, else
   * the holder. A message from a seat placed on a peer that names no seat is that seat's
   * own work, recorded as its words (docs/seats.md, placement).
   */
  route(named: string | null, from: string | null): Routed {
    const s = this.state!;
    const active = (name: string | null): SeatState | undefined => {
      const seat = name === null ? undefined : seatNamed(s, name);
      return seat?.state === "active" ? seat : undefined;
    };
    const own = named === null ? active(from) : undefined;
    if (own && own.placement !== "host") return { seat: own.name, here: false, own: true };
    const seat = active(named) ?? seatNamed(s, s.holder)!;
    return { seat: seat.name, here: seat.placement === "host", own: false };
  }

  /** Hands a message sent with `onBusy: "steer"` to the running turn's engine (steering.ts). */
  steer(seq: number): Promise<void> {
    return this.steering.steer(seq);
  }

  /** A delegation's child hands its outcome to the parent (reports.ts). */
  reportToParent(): Promise<void> {
    return this.reports.toParent();
  }

  /** The system error line for a turn the host lost, written when this object is rebuilt. */
  loseTurn(): Promise<void> {
    return this.ending.lose();
  }
}
