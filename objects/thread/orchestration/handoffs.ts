import { CODES } from "../../../src/api/errors.js";
import type { HandoffAnsweredBody, HandoffOfferedBody } from "../../../src/api/events.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import type { Handoff, HandoffContext, HandoffList, HandoffOffered, HandoffState } from "../../../src/api/seats.js";
import { seatView } from "../../../src/rules/seat-view.js";
import { curatorSummary } from "../compaction/curator.js";
import type { PreparedEvent } from "../log/event-log.js";
import { archivedRefusal, missing, seatRefusal } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import type { AlarmPart } from "../../lib/alarm-schedule.js";
import { seatNamed, type ThreadState } from "../thread-state.js";

type HandoffRow = {
  from_seq: number;
  from_seat: string;
  to_seat: string;
  note: string | null;
  context: HandoffContext;
  offered_by: Handoff["offeredBy"];
  state: HandoffState;
  answered_seq: number | null;
};

const toHandoff = (r: HandoffRow): Handoff => ({
  fromSeq: r.from_seq,
  from: r.from_seat,
  to: r.to_seat,
  note: r.note,
  context: r.context,
  offeredBy: r.offered_by,
  state: r.state,
  answeredSeq: r.answered_seq,
});

/** An offer to cancel, prepared outside the commit that removes one of its seats. */
export type PreparedCancel = { fromSeq: number; event: PreparedEvent } | null;

/**
 * The handoffs of one Thread (docs/seats.md): an offer of the thread to another seat,
 * identified by the seq of its `handoff-offered` event, one pending at a time. Accepting
 * makes the target the holder; declining changes nothing else. Rows live in the
 * `handoffs` table, written in the same commit as their events.
 */
export class Handoffs {
  /**
   * A pending offer nobody answers within `SERVICE_HANDOFF_TIMEOUT_MS` is cancelled
   * (`expired: true`) from the object's alarm, at its event's time plus the timeout: it
   * would otherwise hold every other offer off (one is pending at a time).
   */
  readonly alarm: AlarmPart = {
    name: "handoff offers",
    nextDueAt: () => this.dueAt(),
    runDue: (now) => this.expireDue(now),
  };

  constructor(private readonly thread: Pick<ThreadAccess, "append" | "commits" | "config" | "env" | "log" | "prepareOrRefuse" | "reschedule" | "saveState" | "sql" | "state" | "syncCatalogNow" | "tables">) {}

  private get sql(): SqlStorage {
    return this.thread.sql;
  }

  list(): Outcome<HandoffList> {
    if (!this.thread.state()) return missing();
    return ok({ handoffs: this.sql.exec<HandoffRow>("SELECT * FROM handoffs ORDER BY from_seq").toArray().map(toHandoff) });
  }

  private pending(): Handoff | null {
    const r = this.sql.exec<HandoffRow>("SELECT * FROM handoffs WHERE state = 'pending'").toArray()[0];
    return r ? toHandoff(r) : null;
  }

  private byId(fromSeq: number): Handoff | null {
    const r = this.sql.exec<HandoffRow>("SELECT * FROM handoffs WHERE from_seq = ?", fromSeq).toArray()[0];
    return r ? toHandoff(r) : null;
  }

  /** Offers the thread, from the seat that holds it, to seat `to`. */
  async offer(to: string, note: string | null, context: HandoffContext, offeredBy: Handoff["offeredBy"], turnId?: string): Promise<Outcome<HandoffOffered>> {
    const s = this.thread.state();
    if (!s) return missing();
    const refusal = (t: ThreadState): Outcome<never> | null => {
      if (t.archivedAt) return archivedRefusal(t);
      // A model's offer is its turn's: one that ended meanwhile offers nothing.
      if (turnId !== undefined && t.turn?.id !== turnId) return refuse(409, `turn ${turnId} is not running on thread ${t.id}`, CODES.turnNotRunning);
      const noSeat = seatRefusal(t, to);
      if (noSeat) return noSeat;
      if (t.holder === to) return refuse(409, `seat ${to} holds the thread already`, CODES.seatHoldsThread);
      const open = this.pending();
      if (open) return refuse(409, `offer ${open.fromSeq} (${open.from} to ${open.to}) is pending: accept or decline it first`, CODES.handoffPending, { fromSeq: open.fromSeq });
      return null;
    };
    const early = refusal(s);
    if (early) return early;
    const body = (t: ThreadState): HandoffOfferedBody => ({ from: t.holder, to, note, context, offeredBy, ...(turnId ? { turnId } : {}) });
    const prepared = await this.thread.prepareOrRefuse("handoff-offered", body(s));
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<HandoffOffered> => {
      const t = this.thread.state()!;
      const late = refusal(t);
      if (late) return late;
      const b = body(t);
      const e = this.thread.append({ ...prepared.value, text: JSON.stringify(b) });
      this.sql.exec(
        "INSERT INTO handoffs (from_seq, from_seat, to_seat, note, context, offered_by, state) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
        e.seq,
        b.from,
        to,
        note,
        context,
        offeredBy,
      );
      return ok({ ...this.byId(e.seq)!, ts: e.ts });
    });
    if (outcome.ok && this.thread.config.handoffTimeoutMs > 0) await this.thread.reschedule();
    return outcome;
  }

  private dueAt(): number | null {
    const timeout = this.thread.config.handoffTimeoutMs;
    const open = timeout > 0 ? this.pending() : null;
    const offered = open ? Date.parse(this.thread.log.get(open.fromSeq)?.ts ?? "") : NaN;
    return Number.isFinite(offered) ? offered + timeout : null;
  }

  private async expireDue(now: number): Promise<void> {
    const due = this.dueAt();
    if (due === null || due > now) return;
    const open = this.pending()!;
    const reason = `nobody accepted or declined it within ${this.thread.config.handoffTimeoutMs} ms`;
    const cancel = { fromSeq: open.fromSeq, event: await this.thread.log.prepare("handoff-cancelled", { fromSeq: open.fromSeq, reason, expired: true }) };
    await this.thread.commits.write(() => this.applyCancel(cancel));
  }

  private closedRefusal(fromSeq: number): Outcome<never> | null {
    const h = this.byId(fromSeq);
    if (!h) return refuse(404, `thread has no handoff offer ${fromSeq}`, CODES.handoffNotFound);
    if (h.state !== "pending") return refuse(409, `offer ${fromSeq} is ${h.state} already (event ${h.answeredSeq})`, CODES.handoffClosed, { state: h.state, answeredSeq: h.answeredSeq });
    return null;
  }

  /**
   * Makes the offer's target the holder. With `context: "summary"` the curator writes the
   * summary first, from the transcript as the target would see it; that seat starts from
   * the summary and what comes after it, in a new engine session.
   */
  async accept(fromSeq: number): Promise<Outcome<Handoff>> {
    if (!this.thread.state()) return missing();
    const early = this.closedRefusal(fromSeq);
    if (early) return early;
    const offer = this.byId(fromSeq)!;
    let base: { row: number; summary: string; model: string } | null = null;
    if (offer.context === "summary") {
      // A turn may be running: the summary stops before any call still waiting for its result.
      const row = this.thread.tables.cleanCut(this.thread.tables.lastRow());
      const upTo = this.thread.tables.context().filter((h) => h.row === undefined || h.row <= row);
      const written = await curatorSummary(this.thread, seatView(upTo, offer.to, this.thread.tables.seatBase(offer.to)).entries);
      if ("error" in written) return refuse(503, `the summary for seat ${offer.to} could not be written: ${written.error}; the offer is still pending`, CODES.summaryUnavailable);
      base = { row, summary: written.summary, model: written.model };
    }
    const answered: HandoffAnsweredBody = { fromSeq, ...(base ? { summary: base.summary, summaryModel: base.model } : {}) };
    const prepared = await this.thread.prepareOrRefuse("handoff-accepted", answered);
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<Handoff> => {
      const late = this.closedRefusal(fromSeq);
      if (late) return late;
      const t = this.thread.state()!;
      if (t.archivedAt) return archivedRefusal(t);
      const e = this.thread.append(prepared.value);
      this.close(fromSeq, "accepted", e.seq);
      t.holder = offer.to;
      if (base) {
        this.thread.tables.setSeatBase(offer.to, { row: base.row, summary: base.summary });
        seatNamed(t, offer.to)!.generation += 1;
      }
      this.thread.saveState();
      return ok(this.byId(fromSeq)!);
    });
    if (outcome.ok) await this.thread.syncCatalogNow();
    return outcome;
  }

  async decline(fromSeq: number): Promise<Outcome<Handoff>> {
    const s = this.thread.state();
    if (!s) return missing();
    const early = this.closedRefusal(fromSeq) ?? (s.archivedAt ? archivedRefusal(s) : null);
    if (early) return early;
    const prepared = await this.thread.prepareOrRefuse("handoff-declined", { fromSeq });
    if (!prepared.ok) return prepared;
    return this.thread.commits.write((): Outcome<Handoff> => {
      const t = this.thread.state()!;
      const late = this.closedRefusal(fromSeq) ?? (t.archivedAt ? archivedRefusal(t) : null);
      if (late) return late;
      const e = this.thread.append(prepared.value);
      this.close(fromSeq, "declined", e.seq);
      return ok(this.byId(fromSeq)!);
    });
  }

  /** The pending offer made by or to `seat`, to cancel in the commit that removes it. */
  async prepareCancel(seat: string, reason: string): Promise<PreparedCancel> {
    const open = this.pending();
    if (!open || (open.from !== seat && open.to !== seat)) return null;
    return { fromSeq: open.fromSeq, event: await this.thread.log.prepare("handoff-cancelled", { fromSeq: open.fromSeq, reason }) };
  }

  /** Inside the commit: cancels the offer unless it was answered since. */
  applyCancel(cancel: PreparedCancel): void {
    if (!cancel || this.byId(cancel.fromSeq)?.state !== "pending") return;
    const e = this.thread.append(cancel.event);
    this.close(cancel.fromSeq, "cancelled", e.seq);
  }

  private close(fromSeq: number, state: HandoffState, seq: number): void {
    this.sql.exec("UPDATE handoffs SET state = ?, answered_seq = ? WHERE from_seq = ?", state, seq, fromSeq);
  }
}
