import type { TurnFailure } from "../../../src/api/engine.js";
import { RUNTIME_SENDER, STALLED_NUDGE, type QueuedBecause } from "../../../src/api/turns.js";
import { ok } from "../../../src/api/outcome.js";
import { hostOf } from "../../../src/platform/stubs.js";
import type { Compaction } from "../compaction/compaction.js";
import type { PreparedEvent } from "../log/event-log.js";
import type { Loops } from "../orchestration/loops.js";
import type { PreparedCancellation, Waits } from "../orchestration/waits.js";
import { archivedRefusal, degradedRefusal } from "../refusals.js";
import { restage, type ThreadAccess } from "../thread-access.js";
import { seatModel, seatNamed, type ThreadState } from "../thread-state.js";
import { nextOnChain } from "./failover.js";
import type { LiveTurn, TurnSlot } from "./live.js";
import type { Reports } from "./reports.js";
import type { TurnEnd } from "./runner.js";
import { UNTAKEN, type Steering } from "./steering.js";

export const LOST_TURN_TEXT = "This turn was lost to a host restart";

/** What a turn's end uses of its Thread. */
export type EndThread = Pick<ThreadAccess, "env" | "state" | "log" | "commits" | "append" | "tables" | "saveState" | "syncCatalogNow" | "abort">;

/** The parts a turn's end settles, and starting the next turn. */
export interface EndParts {
  readonly waits: Pick<Waits, "prepareCancellations" | "applyCancellations" | "afterWaitClosed">;
  readonly loops: Pick<Loops, "prepareLoopStep" | "applyLoopStep">;
  readonly compaction: Pick<Compaction, "dropTurn">;
  readonly steering: Pick<Steering, "join" | "settle">;
  readonly reports: Pick<Reports, "noteOutcome" | "toParent" | "toRoom">;
  kick(): void;
}

/**
 * The end of a turn: as the engine reported it, the least that ends it when that cannot
 * be written, or as lost when a new instance finds it running. Each settles the turn's
 * waits, steering messages and unanswered calls in one commit, then answers the senders
 * and starts the next turn.
 */
export class TurnEnding {
  constructor(
    private readonly thread: EndThread,
    private readonly parts: EndParts,
    private readonly slot: Pick<TurnSlot, "live" | "nudgedLoop" | "answerWaiters" | "moveWaiters" | "waiting">,
  ) {}

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  /**
   * Ends the running turn: its outcome, every approval or question it still waited on
   * (cancelled), and, for a loop, what comes next. Then /send callers get their answer
   * and the next queued message starts the next turn.
   */
  async finish(live: LiveTurn, end: TurnEnd): Promise<void> {
    const log = this.thread.log;
    const failure = end.outcome === "failed" ? (end.failure ?? { class: "unknown" as const, error: "the turn failed" }) : null;
    const closing = failure
      ? await log.prepare("turn-failed", { turnId: live.id, class: failure.class, error: failure.error })
      : await log.prepare("turn-ended", { turnId: live.id, ...(end.stop ? { stop: end.stop } : {}) });
    const system = end.lost ? await log.prepare("system", { level: "error", text: `${LOST_TURN_TEXT}: ${failure!.error}`, turnId: live.id }) : null;
    const cancelled = await this.parts.waits.prepareCancellations(live.id);
    const seat = seatNamed(this.state!, live.seat)!;
    const next = failure ? nextOnChain(this.state!, seat, failure.class) : null;
    const failover = next
      ? await log.prepare("failover", { turnId: live.id, class: failure!.class, from: seatModel(this.state!, seat), to: next.to, inputs: live.inputs })
      : null;
    const nudge = failover ? null : await this.prepareNudge(live, failure);
    const untaken = await log.prepare("steered", { target: 0, turnId: live.id, taken: false, reason: UNTAKEN });
    const loopNext = failover || nudge ? null : await this.parts.loops.prepareLoopStep(live.lastReply?.text ?? null, failure, live.loopTurn);
    let nudged: number | null = null;
    await this.thread.commits.write(() => {
      if (system) this.thread.append(system);
      const closed = this.thread.append(closing);
      this.parts.waits.applyCancellations(cancelled);
      this.thread.tables.settleUnanswered(live.startedSeq, closed.seq, failure ? `the turn ended (${failure.class}) before this call finished` : "the turn ended before this call finished");
      this.parts.steering.join(live.id, live.startedSeq, true);
      this.parts.steering.settle(live.id, untaken, UNTAKEN);
      if (failover && next) {
        // The same messages go again, first in line, on the next model of the chain.
        this.thread.append(failover);
        this.state!.chainStep = next.step;
        this.parts.compaction.dropTurn(live.inputs, live.startedSeq, false);
        for (const m of live.messages) this.thread.tables.queue(m.seq, m.text, m.from, live.seat);
      } else if (live.dropsContext) this.parts.compaction.dropTurn(live.inputs, live.startedSeq, true);
      if (nudge) {
        const e = this.thread.append(nudge);
        this.thread.tables.queue(e.seq, STALLED_NUDGE, RUNTIME_SENDER, live.seat);
        nudged = e.seq;
        this.slot.nudgedLoop = live.loopTurn;
      }
      this.parts.loops.applyLoopStep(loopNext);
      // A delegation's child: the turn that answered its prompt is the operation's outcome.
      if (!failover && !nudge) this.parts.reports.noteOutcome(failure ? { status: "failed", error: failure.error } : { status: "completed", ...(live.lastReply ? { result: live.lastReply.text } : {}) });
      this.state!.turn = null;
      restage(this.thread);
    });
    this.slot.live = null;
    // A failover or a nudge runs the same messages again: the outcome waits for that turn.
    if (!failover && !nudge) {
      void this.parts.reports.toParent();
      void this.parts.reports.toRoom(live.inputs, failure);
    }
    // The nudge's turn answers the stalled turn's senders: moved before any await, so the
    // nudge's turn cannot end before its waiters are in place.
    if (nudged !== null) this.slot.moveWaiters(live.inputs, nudged);
    await this.afterTurnEnded(live.id, failure, cancelled);
    // After a failover the senders wait on: the retry answers their messages.
    if (!failover && nudged === null) this.slot.answerWaiters(live.inputs, ok({ turnId: live.id, outcome: end.outcome, failure, reply: live.lastReply }));
    this.parts.kick();
    // Messages queued behind a turn that left the thread degraded (or retired) get no turn
    // until it is recovered (or restored): their senders hear that now, not never.
    const s = this.state!;
    const hold = s.degraded ? degradedRefusal(s) : s.archivedAt ? archivedRefusal(s) : null;
    if (hold && !hold.ok)
      this.slot.answerWaiters(
        this.slot.waiting(),
        ok({ turnId: null, outcome: "queued", failure: null, reply: null, queuedBecause: hold.body as QueuedBecause }),
      );
  }

  /** A turn that stalled gets one nudge from the runtime, which its senders wait for; a nudged turn that stalls again ends. */
  private async prepareNudge(live: LiveTurn, failure: TurnFailure | null): Promise<PreparedEvent | null> {
    if (failure?.class !== "stalled" || live.messages.every((m) => m.from === RUNTIME_SENDER)) return null;
    return this.thread.log.prepare("message", { text: STALLED_NUDGE, from: RUNTIME_SENDER });
  }

  /**
   * The turn's full end could not be written (a body to save failed, say): write the least
   * that ends it, so the thread does not stay mid-turn. If even that fails the storage is
   * broken, and the object is reset: its next instance finds the turn and records it lost.
   */
  async endPlainly(live: LiveTurn, cause: Error): Promise<void> {
    const failure: TurnFailure = { class: "unknown", error: `the turn's end could not be recorded: ${cause.message}`.slice(0, 2000) };
    try {
      const failed = await this.thread.log.prepare("turn-failed", { turnId: live.id, ...failure });
      const untaken = await this.thread.log.prepare("steered", { target: 0, turnId: live.id, taken: false, reason: UNTAKEN });
      await this.thread.commits.write(() => {
        const e = this.thread.append(failed);
        this.thread.tables.settleUnanswered(live.startedSeq, e.seq, "the turn's end could not be recorded");
        this.parts.steering.join(live.id, live.startedSeq, true);
        this.parts.steering.settle(live.id, untaken, UNTAKEN);
        this.parts.reports.noteOutcome({ status: "failed", error: failure.error });
        this.state!.turn = null;
        restage(this.thread);
      });
    } catch (err) {
      this.thread.abort(`turn ${live.id} could not be ended: ${(err as Error).message}`);
      return;
    }
    this.slot.live = null;
    void this.parts.reports.toParent();
    await this.afterTurnEnded(live.id, failure, []);
    this.slot.answerWaiters(live.inputs, ok({ turnId: live.id, outcome: "failed", failure, reply: live.lastReply }));
    this.parts.kick();
  }

  /** The system error line for a turn the host lost, written when this object is rebuilt. */
  async lose(): Promise<void> {
    const turn = this.state!.turn!;
    const log = this.thread.log;
    const system = await log.prepare("system", { level: "error", text: LOST_TURN_TEXT, turnId: turn.id });
    const failed = await log.prepare("turn-failed", { turnId: turn.id, class: "session", error: LOST_TURN_TEXT });
    const cancelled = await this.parts.waits.prepareCancellations(turn.id);
    const paused = await log.prepare("loop-stopped", { reason: "turn-failed" });
    const untaken = await log.prepare("steered", { target: 0, turnId: turn.id, taken: false, reason: UNTAKEN });
    await this.thread.commits.write(() => {
      this.thread.append(system);
      const e = this.thread.append(failed);
      this.parts.waits.applyCancellations(cancelled);
      // The lost turn's start is not kept in the state: every unanswered call is settled.
      this.thread.tables.settleUnanswered(0, e.seq, "the turn was lost to a host restart");
      this.parts.steering.join(turn.id, 0, true);
      this.parts.steering.settle(turn.id, untaken, UNTAKEN);
      this.parts.reports.noteOutcome({ status: "failed", error: LOST_TURN_TEXT });
      if (this.state!.loop?.status === "running") {
        this.state!.loop = { ...this.state!.loop, status: "paused", reason: "turn-failed" };
        this.thread.append(paused);
      }
      this.state!.turn = null;
      restage(this.thread);
    });
    void this.parts.reports.toParent();
    void this.parts.reports.toRoom(turn.inputs, { class: "session", error: LOST_TURN_TEXT });
    await this.afterTurnEnded(turn.id, { class: "session", error: LOST_TURN_TEXT }, cancelled);
    this.parts.kick();
  }

  private async afterTurnEnded(turnId: string, failure: TurnFailure | null, cancelled: PreparedCancellation[]): Promise<void> {
    const s = this.state!;
    const id = s.id;
    const host = hostOf(this.thread.env);
    // With messages queued the next turn starts at once: the thread stays in the running
    // index between the two, so a drain never sees it idle in the gap, and a crash in the
    // gap leaves it for the boot sweep to start.
    const next = this.thread.tables.queued() > 0 && !s.degraded && !s.archivedAt;
    await Promise.all([
      next ? null : host.turnEnded(id),
      failure ? host.recordFailure(id, failure.class, failure.error) : null,
      ...cancelled.map((c) => this.parts.waits.afterWaitClosed(c.wait.kind, c.wait.id, "cancelled")),
      this.thread.syncCatalogNow(),
    ]).catch((err: unknown) => console.error(`thread ${id}: after turn ${turnId}:`, err));
  }}
