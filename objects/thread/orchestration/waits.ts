import type { ApprovalDecision, Json, QuestionAction } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import type { EventBodies } from "../../../src/api/events.js";
import type { ApprovalResolved, QuestionStatus } from "../../../src/api/turns.js";
import { workspaceOf } from "../../../src/platform/stubs.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import type { PreparedEvent } from "../log/event-log.js";
import type { AlarmPart } from "../../lib/alarm-schedule.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { missing } from "../refusals.js";
import { restage, type ThreadAccess } from "../thread-access.js";
import type { ThreadState } from "../thread-state.js";
import type { Wait } from "../turn/tables.js";

/** An open wait and the event that cancels it, prepared before the commit that writes it. */
export interface PreparedCancellation {
  wait: Wait;
  event: PreparedEvent;
}

/**
 * The approvals and questions a running turn waits on: opened from the engine's reports,
 * resolved by people (and the engine told), cancelled when their turn ends. The
 * workspace keeps an index of the open ones.
 */
export class Waits {
  /** Told of every approval decided, after its commit: a gate's approval decides the gate (objects/thread/orchestration/gates.ts). */
  onApprovalResolved: ((wait: Wait, decision: ApprovalDecision, expired: boolean) => Promise<void>) | null = null;

  /** Every open wait with a timeout expires from the object's alarm, at its opening's time plus the timeout. */
  readonly alarm: AlarmPart = {
    name: "wait timeouts",
    nextDueAt: () => {
      let next: number | null = null;
      for (const w of this.thread.tables.openWaits()) {
        const due = this.dueAt(w);
        if (due !== null && (next === null || due < next)) next = due;
      }
      return next;
    },
    runDue: (now) => this.expireDue(now),
  };

  constructor(private readonly thread: Pick<ThreadAccess, "append" | "commits" | "env" | "log" | "prepareOrRefuse" | "reschedule" | "saveState" | "state" | "syncCatalogNow" | "tables">) {}

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  async resolveApproval(approvalId: string, decision: ApprovalDecision, expired = false): Promise<Outcome<ApprovalResolved>> {
    if (!this.state) return missing();
    const found = this.openWaitOrRefusal(approvalId, "approval");
    if (!found.ok) return found;
    const marked = expired ? { expired: true as const } : {};
    const prepared = await this.thread.prepareOrRefuse("approval-resolved", { approvalId, decision, ...marked });
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<ApprovalResolved & { turnId: string }> => {
      const still = this.openWaitOrRefusal(approvalId, "approval");
      if (!still.ok) return still;
      const e = this.thread.append(prepared.value);
      this.thread.tables.closeWait(approvalId, "resolved", { decision, ...marked }, e.seq);
      restage(this.thread);
      return ok({ approvalId, decision, seq: e.seq, turnId: still.value.turnId });
    });
    if (!outcome.ok) return outcome;
    // What the decision settles (a gate's result) is in the log before the approval leaves
    // the workspace's open list: whoever saw it leave finds the result written.
    await this.onApprovalResolved?.(found.value, decision, expired);
    await this.afterWaitClosed("approval", approvalId, decision);
    if (this.engineWaits(outcome.value.turnId))
      await callEngine(this.thread.env, `/turns/${outcome.value.turnId}/approvals/${approvalId}`, { decision, ...marked }).catch((err: unknown) =>
        console.error(`approval ${approvalId}: the engine could not be told: ${(err as Error).message}`),
      );
    const { turnId: _turn, ...resolved } = outcome.value;
    return ok(resolved);
  }

  question(requestId: string): Outcome<QuestionStatus> {
    if (!this.state) return missing();
    const w = this.thread.tables.wait(requestId, "question");
    if (!w) return refuse(404, `thread has no question ${requestId}`, CODES.questionNotFound);
    return ok(this.questionStatus(w));
  }

  async resolveQuestion(requestId: string, action: QuestionAction, answer?: string, expired = false): Promise<Outcome<QuestionStatus>> {
    if (!this.state) return missing();
    const found = this.openWaitOrRefusal(requestId, "question");
    if (!found.ok) return found;
    const body = { requestId, action, ...(answer !== undefined ? { answer } : {}), ...(expired ? { expired: true as const } : {}) };
    const prepared = await this.thread.prepareOrRefuse("question-resolved", body);
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<Wait> => {
      const still = this.openWaitOrRefusal(requestId, "question");
      if (!still.ok) return still;
      const e = this.thread.append(prepared.value);
      this.thread.tables.closeWait(requestId, "resolved", { action, ...(answer !== undefined ? { answer } : {}), ...(expired ? { expired: true } : {}) }, e.seq);
      restage(this.thread);
      return ok(this.thread.tables.wait(requestId, "question")!);
    });
    if (!outcome.ok) return outcome;
    await this.afterWaitClosed("question", requestId, action);
    if (this.engineWaits(outcome.value.turnId))
      await callEngine(this.thread.env, `/turns/${outcome.value.turnId}/questions/${requestId}`, { action, answer }).catch((err: unknown) =>
        console.error(`question ${requestId}: the engine could not be told: ${(err as Error).message}`),
      );
    return ok(this.questionStatus(outcome.value));
  }

  async openWait<K extends "approval-request" | "question">(
    turnId: string,
    kind: "approval" | "question",
    id: string,
    eventKind: K,
    body: EventBodies[K],
  ): Promise<void> {
    const prepared = await this.thread.log.prepare(eventKind, body);
    const { turnId: _t, ...detail } = body as unknown as Record<string, unknown>;
    const e = await this.thread.commits.write(() => {
      if (this.thread.tables.hasWait(id)) throw new Error(`the engine reused the id ${id}`);
      const written = this.thread.append(prepared);
      this.thread.tables.openWait({ id, kind, turnId, seq: written.seq, detail });
      restage(this.thread);
      return written;
    });
    void this.thread.syncCatalogNow();
    // No timer of its own: one an evicted instance took with it would be lost.
    if (this.timeoutOf(kind) !== null) await this.thread.reschedule();
    const ws = workspaceOf(this.thread.env, this.state!.spec.workspace);
    const threadId = this.state!.id;
    const indexed =
      kind === "approval"
        ? ws.approvalOpened({
            approvalId: id,
            threadId,
            turnId,
            seq: e.seq,
            name: String(detail.name),
            input: detail.input as Json,
            openedAt: e.ts,
          })
        : ws.questionOpened({ requestId: id, threadId, turnId, seq: e.seq, question: String(detail.question), openedAt: e.ts });
    await indexed.catch((err: unknown) => console.error(`workspace index: ${(err as Error).message}`));
  }

  private timeoutOf(kind: Wait["kind"]): number | null {
    const spec = this.state?.spec;
    return (kind === "approval" ? spec?.approvalTimeoutMs : spec?.questionTimeoutMs) ?? null;
  }

  /**
   * A wait nobody answered in time (the spawn spec's or the workspace policy's timeout):
   * an approval is resolved as a deny and a question dismissed, both marked `expired`, and
   * the engine told, so the turn goes on instead of holding the thread.
   */
  private async expire(id: string, kind: Wait["kind"]): Promise<void> {
    if (this.thread.tables.wait(id, kind)?.status !== "open") return;
    const settled = kind === "approval" ? await this.resolveApproval(id, "deny", true) : await this.resolveQuestion(id, "dismiss", undefined, true);
    // Answered in the meantime: the answer stands.
    if (!settled.ok && settled.body.code !== CODES.approvalClosed && settled.body.code !== CODES.questionClosed)
      console.error(`${kind} ${id} could not expire: ${settled.body.error}`);
  }

  /** When an open wait expires: the time of the event that opened it, plus its kind's timeout. */
  private dueAt(w: Wait): number | null {
    const timeout = this.timeoutOf(w.kind);
    const opened = Date.parse(this.thread.log.get(w.seq)?.ts ?? "");
    return timeout !== null && Number.isFinite(opened) ? opened + timeout : null;
  }

  /** From the alarm: expires every open wait past its timeout. */
  private async expireDue(now: number): Promise<void> {
    for (const w of this.thread.tables.openWaits()) {
      const due = this.dueAt(w);
      if (due !== null && due <= now) await this.expire(w.id, w.kind);
    }
  }

  async prepareCancellations(turnId: string): Promise<PreparedCancellation[]> {
    const open = this.thread.tables.openWaits(turnId);
    return Promise.all(
      open.map(async (wait) => ({
        wait,
        event:
          wait.kind === "approval"
            ? await this.thread.log.prepare("approval-resolved", { approvalId: wait.id, decision: "cancelled" })
            : await this.thread.log.prepare("question-resolved", { requestId: wait.id, action: "cancelled" }),
      })),
    );
  }

  applyCancellations(cancelled: PreparedCancellation[]): void {
    for (const c of cancelled) {
      // Answered between the prepare and this commit: the answer stands.
      if (this.thread.tables.wait(c.wait.id, c.wait.kind)?.status !== "open") continue;
      const e = this.thread.append(c.event);
      this.thread.tables.closeWait(c.wait.id, "cancelled", c.wait.kind === "approval" ? { decision: "cancelled" } : { action: "cancelled" }, e.seq);
    }
  }

  /**
   * Whether an engine waits on what a wait of `turnId` decided: only the running turn's
   * engine does. A gate's approval belongs to no turn (objects/thread/orchestration/gates.ts).
   */
  private engineWaits(turnId: string): boolean {
    return this.state?.turn?.id === turnId;
  }

  /** `outcome` is the decision, or the question's action, that closed it. */
  async afterWaitClosed(kind: "approval" | "question", id: string, outcome: ApprovalDecision | QuestionAction | "cancelled"): Promise<void> {
    await workspaceOf(this.thread.env, this.state!.spec.workspace)
      .closed(kind, id, outcome)
      .catch((err: unknown) => console.error(`workspace index: ${(err as Error).message}`));
    void this.thread.syncCatalogNow();
  }

  private openWaitOrRefusal(id: string, kind: Wait["kind"]): Outcome<Wait> {
    const w = this.thread.tables.wait(id, kind);
    if (!w)
      return kind === "approval"
        ? refuse(404, `thread has no approval ${id}`, CODES.approvalNotFound)
        : refuse(404, `thread has no question ${id}`, CODES.questionNotFound);
    if (w.status !== "open") {
      const outcome = w.outcome ?? {};
      return kind === "approval"
        ? refuse(200, `approval ${id} is already closed (${String(outcome.decision)})`, CODES.approvalClosed, { approvalId: id, ...outcome })
        : refuse(409, `question ${id} is already closed (${String(outcome.action)})`, CODES.questionClosed, { requestId: id, ...outcome });
    }
    return ok(w);
  }

  private questionStatus(w: Wait): QuestionStatus {
    const action = w.outcome?.action as QuestionAction | "cancelled" | undefined;
    const status: QuestionStatus["status"] =
      w.status === "open" ? "open" : action === "answer" ? "answered" : action === "dismiss" ? "dismissed" : action === "continue" ? "continued" : "cancelled";
    return {
      requestId: w.id,
      threadId: this.state!.id,
      turnId: w.turnId,
      question: String(w.detail.question),
      status,
      answer: typeof w.outcome?.answer === "string" ? w.outcome.answer : null,
      seq: w.seq,
      resolvedSeq: w.resolvedSeq,
    };
  }
}
