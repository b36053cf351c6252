import { CODES } from "../../src/api/errors.js";
import type { OperationAccepted, ReportOperation } from "../../src/api/operations.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import { FIRST_SEAT, type HandoffContext, type HandoffOffered } from "../../src/api/seats.js";
import type { ToolTurn } from "../../src/api/tools.js";
import { threadOf } from "../../src/platform/stubs.js";
import type { Handoffs } from "./handoffs.js";
import { missing } from "./refusals.js";
import type { ThreadAccess } from "./thread-access.js";

/**
 * The runtime's tools as a running turn calls them (docs/tools.md). A call is its turn's:
 * one from a turn that has ended is refused, so a tool token that outlived its turn acts
 * on nothing. Each call then goes where the matching route goes.
 */
export class TurnTools {
  constructor(
    private readonly thread: ThreadAccess,
    private readonly handoffs: Handoffs,
  ) {}

  turn(turnId: string): Outcome<ToolTurn> {
    const s = this.thread.state();
    if (!s) return missing();
    if (s.turn?.id !== turnId)
      return refuse(409, `turn ${turnId} is not running on thread ${s.id}: a tool call belongs to the turn that makes it`, CODES.turnNotRunning);
    return ok({ seat: s.turn.seat ?? FIRST_SEAT, permissions: s.spec.permissions });
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
   * A delegation's child reports on its operation, in the parent, as `child`: what
   * `POST /threads/:parent/operations/:operation` does. An outcome it reported is the one
   * its turn's end would have given, so the end reports nothing more.
   */
  async report(turnId: string, report: ReportOperation): Promise<Outcome<OperationAccepted>> {
    const turn = this.turn(turnId);
    if (!turn.ok) return turn;
    const d = this.thread.state()!.delegation;
    if (!d) return refuse(409, `thread ${this.thread.state()!.id} answers no delegation: only a delegated thread reports to its parent`, CODES.notDelegated);
    if ("outcome" in report && d.reported) return refuse(409, `this delegation's outcome was reported already`, CODES.operationSettled);
    const taken = (await threadOf(this.thread.env, d.parent).reportOperation(d.operation, JSON.stringify(report), "child")) as Outcome<OperationAccepted>;
    if (taken.ok && "outcome" in report)
      await this.thread.commits.write(() => {
        const own = this.thread.state()!.delegation!;
        own.outcome = report.outcome;
        own.reported = true;
        this.thread.saveState();
      });
    return taken;
  }
}
