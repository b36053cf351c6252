import type { GateRequest, GateResult } from "../../../src/api/cycles.js";
import type { ApprovalDecision, Json } from "../../../src/api/engine.js";
import type { GateBody } from "../../../src/api/events.js";
import type { OperationSummary } from "../../../src/api/operations.js";
import { ok, type Outcome } from "../../../src/api/outcome.js";
import { newId } from "../../../src/shared/ids.js";
import type { Operations } from "./operations.js";
import { missing } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import type { Wait } from "../turn/tables.js";
import type { Waits } from "./waits.js";

/** A gate's approval is the thread's like any other, but no turn waits on it: its "turn" is the gate. */
const isGateWait = (turnId: string) => turnId.startsWith("gate_");

/**
 * The gates of one Thread (docs/operations.md, "Gates"): `auto` weighs the thread's
 * children (its delegations) and the caller's checks; `human` opens an approval, which a
 * person answers on the approvals route (it is listed with the workspace's approvals, and
 * so as an attention item). A refusal is a result with reasons, never an error. Each
 * decision is a `gate` event.
 */
export class Gates {
  /** Callers of a human gate waiting for its decision, by approval id (memory only: a caller that left reads the `gate` event). */
  private readonly waiting = new Map<string, (r: GateResult) => void>();

  constructor(
    private readonly thread: Pick<ThreadAccess, "append" | "commits" | "log" | "state" | "tables">,
    private readonly waits: Waits,
    private readonly operations: Operations,
  ) {
    waits.onApprovalResolved = (wait, decision, expired) => this.decided(wait, decision, expired);
  }

  async ask(req: GateRequest): Promise<Outcome<GateResult>> {
    if (!this.thread.state()) return missing();
    return req.mode === "auto" ? this.auto(req) : this.human(req);
  }

  private async auto(req: GateRequest): Promise<Outcome<GateResult>> {
    const reasons: string[] = [];
    const all = this.operations.list();
    const ops: OperationSummary[] = all.ok ? all.value.operations : [];
    const weighed = req.operations ? ops.filter((o) => req.operations!.includes(o.operation)) : ops.filter((o) => o.kind === "delegation");
    for (const id of req.operations ?? []) if (!ops.some((o) => o.operation === id)) reasons.push(`no operation ${id} on this thread`);
    for (const o of weighed) {
      if (o.state === "open") reasons.push(`operation ${o.operation} (${o.title}) has not finished`);
      else if (o.state !== "completed") reasons.push(`operation ${o.operation} (${o.title}) ${o.state}${o.outcome?.error ? `: ${o.outcome.error}` : ""}`);
    }
    for (const c of req.checks ?? []) if (!c.ok) reasons.push(`check ${c.name} failed${c.detail ? `: ${c.detail}` : ""}`);
    return ok(await this.record({ gate: newId("gate_"), mode: "auto", step: req.step ?? null, passed: reasons.length === 0, reasons }));
  }

  private async human(req: GateRequest): Promise<Outcome<GateResult>> {
    const gate = newId("gate_");
    const approvalId = newId("appr_");
    const input: Record<string, Json> = { gate, step: req.step ?? null, question: req.question ?? "May this step go on?", checks: (req.checks ?? []) as Json };
    const decided = req.async ? null : new Promise<GateResult>((resolve) => this.waiting.set(approvalId, resolve));
    await this.waits.openWait(gate, "approval", approvalId, "approval-request", { turnId: gate, approvalId, callId: gate, name: "gate", input });
    if (decided) return ok(await decided);
    const opened = this.thread.tables.wait(approvalId, "approval")!;
    return ok({ gate, mode: "human", step: req.step ?? null, passed: null, reasons: [], approvalId, seq: opened.seq });
  }

  /** A gate's approval was decided (by a person, or its timeout): the gate's result. */
  private async decided(wait: Wait, decision: ApprovalDecision, expired: boolean): Promise<void> {
    if (!isGateWait(wait.turnId)) return;
    const input = (wait.detail.input ?? {}) as { step?: string | null };
    const passed = decision === "allow";
    const reasons = passed ? [] : [expired ? "nobody answered the gate's approval in time" : "a person denied it"];
    const result = await this.record({ gate: wait.turnId, mode: "human", step: input.step ?? null, passed, reasons, approvalId: wait.id });
    const waiter = this.waiting.get(wait.id);
    this.waiting.delete(wait.id);
    waiter?.(result);
  }

  private async record(body: GateBody): Promise<GateResult> {
    const prepared = await this.thread.log.prepare("gate", body);
    const e = await this.thread.commits.write(() => this.thread.append(prepared));
    return { ...body, seq: e.seq };
  }
}
