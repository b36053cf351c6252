import type { TurnFailure } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import type { OperationOutcome } from "../../../src/api/operations.js";
import type { Outcome } from "../../../src/api/outcome.js";
import { roomOf, threadOf } from "../../../src/platform/stubs.js";
import type { AlarmPart } from "../../lib/alarm-schedule.js";
import type { ThreadAccess } from "../thread-access.js";
import type { TurnSlot } from "./live.js";

/** How long a delegation's child waits before it hands its outcome to the parent again. */
const REPORT_RETRY_MS = 5000;

/** What the reports use of their Thread. */
export type ReportsThread = Pick<ThreadAccess, "env" | "state" | "commits" | "saveState" | "reschedule">;

/**
 * What a turn's end tells outside the thread: a delegation's outcome to its parent
 * (retried until the parent has it) and a review room's round to its room (not retried:
 * the room watches the thread).
 */
export class Reports {
  /** A delegation's outcome is being handed to the parent, or when it is tried again. */
  private reporting = false;
  private retryAt: number | null = null;

  /** A delegation's outcome the parent has not taken: at once in a new instance, else after a failed hand-over. */
  readonly alarm: AlarmPart = {
    name: "delegation outcome",
    nextDueAt: () => {
      const s = this.thread.state();
      const d = s?.delegation;
      // A turn that just ended (`live` until its commit is in) hands it over itself, at once.
      if (!d?.outcome || d.reported || this.reporting || this.slot.live || ((s!.turn || this.slot.starting) && !s!.archivedAt)) return null;
      return this.retryAt ?? Date.now();
    },
    runDue: () => this.toParent(),
  };

  constructor(
    private readonly thread: ReportsThread,
    private readonly slot: Pick<TurnSlot, "live" | "starting">,
  ) {}

  /** Inside a commit: a delegation's child keeps its first outcome until the parent takes it. */
  noteOutcome(outcome: OperationOutcome): void {
    const d = this.thread.state()!.delegation;
    if (d && !d.outcome) d.outcome = outcome;
  }

  /**
   * A delegation's child hands its outcome to the parent, which settles the operation and
   * wakes. Retried from the alarm until the parent has it; a parent that has an outcome
   * already (a caller settled it) or is gone counts as having it, so there is one wake.
   */
  async toParent(): Promise<void> {
    const s = this.thread.state();
    const d = s?.delegation;
    if (!d?.outcome || d.reported) return;
    // An outcome the model gave mid-turn waits for the turn's end (the child may still be
    // working), unless the thread was retired and no turn will end.
    if ((s!.turn || this.slot.starting) && !s!.archivedAt) return;
    if (this.reporting) return;
    this.reporting = true;
    try {
      let took = false;
      try {
        const r = (await threadOf(this.thread.env, d.parent).reportOperation(d.operation, JSON.stringify({ outcome: d.outcome }), "child")) as Outcome<unknown>;
        took = r.ok || r.status === 404 || r.body.code === CODES.operationSettled;
      } catch (err) {
        console.error(`thread ${this.thread.state()!.id}: its parent ${d.parent} did not take the delegation's outcome (retrying): ${(err as Error).message}`);
      }
      this.retryAt = took ? null : Date.now() + REPORT_RETRY_MS;
      if (took)
        await this.thread.commits.write(() => {
          this.thread.state()!.delegation!.reported = true;
          this.thread.saveState();
        });
    } finally {
      this.reporting = false;
    }
    if (this.retryAt !== null) await this.thread.reschedule();
  }

  /**
   * A review room's thread tells its room that a turn ended: a round that turn answered
   * without a verdict failed. A lost report is caught by the room's own watch of the
   * thread, so it is not retried here.
   */
  async toRoom(inputs: number[], failure: TurnFailure | null): Promise<void> {
    const s = this.thread.state();
    const room = s?.spec.pr?.room;
    if (!room) return;
    try {
      await roomOf(this.thread.env, room).turnEnded(s!.id, inputs, failure);
    } catch (err) {
      console.error(`thread ${this.thread.state()!.id}: its room ${room} did not hear that a turn ended (its watch will): ${(err as Error).message}`);
    }
  }
}
