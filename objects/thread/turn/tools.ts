import { CODES } from "../../../src/api/errors.js";
import type { OperationAccepted, ReportOperation } from "../../../src/api/operations.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { FIRST_SEAT, type HandoffContext, type HandoffOffered } from "../../../src/api/seats.js";
import type { ToolTurn } from "../../../src/api/tools.js";
import { threadOf } from "../../../src/platform/stubs.js";
import type { Handoffs } from "../orchestration/handoffs.js";
import { missing } from "../refusals.js";
import { seatModel, seatNamed } from "../thread-state.js";
import type { ThreadAccess } from "../thread-access.js";

/**
 * The runtime's tools as a running turn calls them (docs/tools.md). A call is its turn's:
 * one from a turn that has ended is refused, so a tool token that outlived its turn acts
 * on nothing. Each call then goes where the matching route goes.
 */
export class TurnTools {
  constructor(
    private readonly thread: Pick<ThreadAccess, "commits" | "env" | "saveState" | "state">,
    private readonly handoffs: Handoffs,
  ) {}

  turn(turnId: string): Outcome<ToolTurn> {
    const s = this.thread.state();
    if (!s) return missing();
    if (s.turn?.id !== turnId)
      return refuse(409, `turn ${turnId} is not running on thread ${s.id}: a tool call belongs to the turn that makes it`, CODES.turnNotRunning);
    const seat = s.turn.seat ?? FIRST_SEAT;
    return ok({ seat, sourceSeq: s.turn.inputs.at(-1) ?? null, permissions: s.spec.permissions, ...seatModel(s, seatNamed(s, seat)!), room: s.spec.pr?.room ?? null, inputs: s.turn.inputs });
  }

  /** The model's offer is recorded as a caller's is, naming the turn; only the seat that holds the thread offers it. */
  offer(turnId: string, to: string, note: string | null, context: HandoffContext): Promise<Outcome<HandoffOffered>> | Outcome<never> {
    const turn = this.turn(turnId);
    if (!turn.ok) return turn;
    const holder = this.thread.state()!.holder;
    if (turn.value.seat !== holder) return refuse(409, `seat ${turn.value.seat} does not hold the thread (${holder} does): only the holder offers it`, CODES.seatNotHolder);
    return this.handoffs.offer(to, note, context, "engine", turnId);
  }

  /**
   * A delegation's child reports on its operation, as `child`. A milestone goes to the
   * parent now: what `POST /threads/:parent/operations/:operation` does. The outcome is
   * kept here as the one its turn's end would have given, and goes to the parent when the
   * turn ends (`reportToParent`): until then the child may still be working, in the
   * checkout it shares with its parent, and a parallel step counts it as running.
   */
  async report(turnId: string, report: ReportOperation): Promise<Outcome<{ operation: string; parent: string }>> {
    const turn = this.turn(turnId);
    if (!turn.ok) return turn;
    const d = this.thread.state()!.delegation;
    if (!d) return refuse(409, `thread ${this.thread.state()!.id} answers no delegation: only a delegated thread reports to its parent`, CODES.notDelegated);
    if (d.outcome) return refuse(409, `this delegation's outcome was given already (${d.outcome.status})`, CODES.operationSettled);
    if ("milestone" in report) {
      const taken = (await threadOf(this.thread.env, d.parent).reportOperation(d.operation, JSON.stringify(report), "child")) as Outcome<OperationAccepted>;
      return taken.ok ? ok({ operation: d.operation, parent: d.parent }) : taken;
    }
    return this.thread.commits.write((): Outcome<{ operation: string; parent: string }> => {
      const own = this.thread.state()!.delegation!;
      if (own.outcome) return refuse(409, `this delegation's outcome was given already (${own.outcome.status})`, CODES.operationSettled);
      own.outcome = report.outcome;
      this.thread.saveState();
      return ok({ operation: own.operation, parent: own.parent });
    });
  }
}
