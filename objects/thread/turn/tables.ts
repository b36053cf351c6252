import type { WindowBody } from "../../../src/api/compaction.js";
import type { TranscriptEntry, TurnInput } from "../../../src/api/engine.js";
import { cleanCut, type SeatBase } from "../../../src/rules/seat-view.js";
import type { AttachmentRef } from "../../../src/api/attachments.js";
import { addMissingColumn } from "../../lib/sql-columns.js";
import { applyWindows, estimateText, type AppliedWindow, type HeldEntry } from "../../../src/rules/compaction.js";


/** An approval or a question a turn waits on. */
export interface Wait {
  id: string;
  kind: "approval" | "question";
  turnId: string;
  /** The event that opened it. */
  seq: number;
  /** For an approval `{callId, name, input}`, for a question `{question}`. */
  detail: Record<string, unknown>;
  status: "open" | "resolved" | "cancelled";
  /** The decision (`allow`/`deny`) or the question's action and answer. */
  outcome: Record<string, unknown> | null;
  resolvedSeq: number | null;
}

type WaitRow = {
  id: string;
  kind: Wait["kind"];
  turn_id: string;
  seq: number;
  detail: string;
  status: Wait["status"];
  outcome: string | null;
  resolved_seq: number | null;
};

const toWait = (r: WaitRow): Wait => ({
  id: r.id,
  kind: r.kind,
  turnId: r.turn_id,
  seq: r.seq,
  detail: JSON.parse(r.detail) as Record<string, unknown>,
  status: r.status,
  outcome: r.outcome ? (JSON.parse(r.outcome) as Record<string, unknown>) : null,
  resolvedSeq: r.resolved_seq,
});

type AttachmentRow = { seq: number; idx: number; name: string; media_type: string; bytes: number; sha256: string };

/** A message sent to steer a running turn (docs/api.md, `onBusy: "steer"`). */
export interface Steer {
  seq: number;
  turnId: string;
  text: string;
  from: string | null;
  /** The seat the message named, if it named one. */
  seat: string | null;
  state: "pending" | "taken" | "not-taken";
  reason: string | null;
  resolvedSeq: number | null;
}

/** Where the next turn's messages go: the seat that answers them, or a seat placed on a peer. */
export interface Routed {
  seat: string;
  here: boolean;
  /** The message is the work of the seat it goes to (placed on a peer), not a message for it. */
  own: boolean;
}

/** A queued message for a seat placed on a peer: it joins the transcript, and no turn runs here. */
export type Elsewhere = TurnInput & { seat: string; own: boolean };

/** Reads and writes of the turn tables (their schema and what each holds: schema.ts), each inside the commit of the event it belongs to. */
export class TurnTables {
  constructor(private readonly sql: SqlStorage) {
    addMissingColumn(sql, "inbox", "seat");
  }

  queue(seq: number, text: string, from?: string, seat?: string): void {
    this.sql.exec("INSERT OR REPLACE INTO inbox (seq, text, sender, seat) VALUES (?, ?, ?, ?)", seq, text, from ?? null, seat ?? null);
  }

  /** Whether a message from `sender` waits in the inbox. */
  hasQueuedFrom(sender: string): boolean {
    return this.sql.exec("SELECT 1 FROM inbox WHERE sender = ? LIMIT 1", sender).toArray().length > 0;
  }

  queued(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM inbox").one().n;
  }

  /**
   * The next turn's messages, removed from the inbox: the oldest message's seat and each
   * message after it for the same seat, up to one for another seat, which waits for the
   * turn after (one turn at a time, in the order the messages came). `route` names the seat
   * a message goes to (its own, or the holder); the messages before it for seats placed on
   * a peer are taken too, as `elsewhere`.
   */
  takeNext(route: (seat: string | null, from: string | null) => Routed): { seat: string | null; inputs: TurnInput[]; elsewhere: Elsewhere[] } {
    const rows = this.sql.exec<{ seq: number; text: string; sender: string | null; seat: string | null }>("SELECT seq, text, sender, seat FROM inbox ORDER BY seq").toArray();
    const inputs: TurnInput[] = [];
    const elsewhere: Elsewhere[] = [];
    let seat: string | null = null;
    for (const r of rows) {
      const to = route(r.seat, r.sender);
      const input = { seq: r.seq, text: r.text, ...(r.sender ? { from: r.sender } : {}) };
      if (!to.here && seat === null) elsewhere.push({ ...input, seat: to.seat, own: to.own });
      else if (!to.here || (seat !== null && to.seat !== seat)) break;
      else (seat = to.seat), inputs.push(input);
      this.sql.exec("DELETE FROM inbox WHERE seq = ?", r.seq);
    }
    return { seat, inputs, elsewhere };
  }


  /**
   * Takes back what a failed turn added to the transcript (its messages and everything
   * after its `turn-started`): the next turn answers the same messages from scratch.
   */
  dropTurnEntries(inputs: number[], startedSeq: number): void {
    for (const seq of inputs) this.sql.exec(`DELETE FROM transcript WHERE seq = ? AND entry LIKE '{"role":"user"%'`, seq);
    this.sql.exec("DELETE FROM transcript WHERE seq >= ?", startedSeq);
  }

  addEntry(seq: number, entry: TranscriptEntry): void {
    this.sql.exec("INSERT INTO transcript (seq, entry) VALUES (?, ?)", seq, JSON.stringify(entry));
  }

  /** Tokens the queued messages will add, estimated. */
  queuedTokens(): number {
    return this.sql
      .exec<{ text: string }>("SELECT text FROM inbox")
      .toArray()
      .reduce((sum, r) => sum + estimateText(r.text), 0);
  }

  private entries(where: string, arg: number): HeldEntry[] {
    return this.sql
      .exec<{ id: number; seq: number; entry: string }>(`SELECT id, seq, entry FROM transcript WHERE ${where} ORDER BY id`, arg)
      .toArray()
      .map((r) => ({ seq: r.seq, entry: JSON.parse(r.entry) as TranscriptEntry, row: r.id }));
  }

  /** The transcript as recorded, from events before `beforeSeq`, oldest first, without any reduction. */
  held(beforeSeq = Number.MAX_SAFE_INTEGER): HeldEntry[] {
    return this.entries("seq < ?", beforeSeq);
  }

  /** The rows added after `row`, as recorded: no reduction made before they were added applies to them. */
  heldAfter(row: number): HeldEntry[] {
    return this.entries("id > ?", row);
  }

  /** The transcript's newest row (0 when empty): where "what came after" a count begins. */
  lastRow(): number {
    return this.sql.exec<{ id: number | null }>("SELECT max(id) AS id FROM transcript").one().id ?? 0;
  }

  /**
   * Closes every tool call the turn that started at `startedSeq` left without a result:
   * providers refuse a conversation with an unanswered call, so the transcript the next
   * turn sends (and a fork's) says what happened instead. The log keeps what did happen.
   */
  settleUnanswered(startedSeq: number, atSeq: number, why: string): void {
    for (const call of this.unanswered(startedSeq))
      this.addEntry(atSeq, {
        role: "tool-result",
        callId: call.callId,
        name: call.name,
        output: `(no result: ${why})`,
        isError: true,
        ...(call.seat ? { seat: call.seat } : {}),
      });
  }

  /** The tool calls of the turn that started at `startedSeq` that have no result yet. */
  private unanswered(startedSeq: number): Extract<TranscriptEntry, { role: "tool-call" }>[] {
    const entries = this.entries("seq >= ?", startedSeq).map((h) => h.entry);
    const answered = new Set(entries.flatMap((e) => (e.role === "tool-result" ? [e.callId] : [])));
    return entries.flatMap((e) => (e.role === "tool-call" && !answered.has(e.callId) ? [e] : []));
  }

  addAttachments(seq: number, refs: readonly AttachmentRef[]): void {
    for (const [idx, r] of refs.entries())
      this.sql.exec("INSERT INTO attachments (seq, idx, name, media_type, bytes, sha256) VALUES (?, ?, ?, ?, ?, ?)", seq, idx, r.name, r.mediaType, r.bytes, r.sha256);
  }

  /** One message's attachments, in order; every message's when `seq` is absent, oldest first. */
  attachments(seq?: number): (AttachmentRef & { seq: number })[] {
    const rows = seq === undefined ? this.sql.exec<AttachmentRow>("SELECT * FROM attachments ORDER BY seq, idx") : this.sql.exec<AttachmentRow>("SELECT * FROM attachments WHERE seq = ? ORDER BY idx", seq);
    return rows.toArray().map((r) => ({ seq: r.seq, name: r.name, mediaType: r.media_type, bytes: r.bytes, sha256: r.sha256 }));
  }

  /** The first attachment with this content, if the thread has one. */
  attachmentBySha(sha256: string): (AttachmentRef & { seq: number }) | null {
    const r = this.sql.exec<AttachmentRow>("SELECT * FROM attachments WHERE sha256 = ? ORDER BY seq, idx LIMIT 1", sha256).toArray()[0];
    return r ? { seq: r.seq, name: r.name, mediaType: r.media_type, bytes: r.bytes, sha256: r.sha256 } : null;
  }

  addSteer(seq: number, turnId: string, text: string, from: string | null, seat: string | null): void {
    this.sql.exec("INSERT INTO steering (seq, turn_id, text, sender, seat, state) VALUES (?, ?, ?, ?, ?, 'pending')", seq, turnId, text, from, seat);
  }

  steer(seq: number): Steer | null {
    return this.steerRows("WHERE seq = ?", seq)[0] ?? null;
  }

  /** Steering messages, oldest first: all of them, or one turn's still waiting for the engine. */
  steers(pendingOf?: string): Steer[] {
    return pendingOf === undefined ? this.steerRows("") : this.steerRows("WHERE turn_id = ? AND state = 'pending'", pendingOf);
  }

  /** Steering messages the engine took into turn `turnId` that are not in the transcript yet. */
  unjoinedSteers(turnId: string): Steer[] {
    return this.steerRows("WHERE turn_id = ? AND state = 'taken' AND joined = 0", turnId);
  }

  markJoined(seq: number): void {
    this.sql.exec("UPDATE steering SET joined = 1 WHERE seq = ?", seq);
  }

  closeSteer(seq: number, state: "taken" | "not-taken", resolvedSeq: number, reason?: string): void {
    this.sql.exec("UPDATE steering SET state = ?, reason = ?, resolved_seq = ? WHERE seq = ?", state, reason ?? null, resolvedSeq, seq);
  }

  private steerRows(where: string, ...args: (string | number)[]): Steer[] {
    return this.sql
      .exec<{ seq: number; turn_id: string; text: string; sender: string | null; seat: string | null; state: Steer["state"]; reason: string | null; resolved_seq: number | null }>(
        `SELECT * FROM steering ${where} ORDER BY seq`,
        ...args,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, turnId: r.turn_id, text: r.text, from: r.sender, seat: r.seat, state: r.state, reason: r.reason, resolvedSeq: r.resolved_seq }));
  }

  /** Whether the turn that started at `startedSeq` has a tool call still waiting for its result. */
  hasUnanswered(startedSeq: number): boolean {
    return this.unanswered(startedSeq).length > 0;
  }

  /**
   * The newest row at or before `row` that parts no tool call from its result: a view that
   * starts after it never shows a result without its call, which a provider refuses.
   */
  cleanCut(row: number): number {
    return cleanCut(this.entries("id > ?", 0), row);
  }

  /** What a seat starts from after a handoff with a summary; null: the whole transcript. */
  seatBase(seat: string): SeatBase | null {
    const r = this.sql.exec<{ row: number; summary: string }>("SELECT row, summary FROM seat_bases WHERE seat = ?", seat).toArray()[0];
    return r ? { row: r.row, summary: r.summary } : null;
  }

  setSeatBase(seat: string, base: SeatBase): void {
    this.sql.exec("INSERT OR REPLACE INTO seat_bases (seat, row, summary) VALUES (?, ?, ?)", seat, base.row, base.summary);
  }

  /** A reduction, for the rows the transcript holds now (`upToRow`). */
  addWindow(seq: number, body: WindowBody): void {
    this.sql.exec("INSERT INTO windows (seq, body, up_to_row) VALUES (?, ?, ?)", seq, JSON.stringify(body), this.lastRow());
  }

  /** The reductions recorded before `beforeSeq`, oldest first. */
  windows(beforeSeq = Number.MAX_SAFE_INTEGER): (AppliedWindow & { seq: number })[] {
    return this.sql
      .exec<{ seq: number; body: string; up_to_row: number }>("SELECT seq, body, up_to_row FROM windows WHERE seq < ? ORDER BY seq", beforeSeq)
      .toArray()
      .map((r) => ({ seq: r.seq, ...(JSON.parse(r.body) as WindowBody), upToRow: r.up_to_row }));
  }

  /** The context as the next model call sees it: the transcript before `beforeSeq` with the reductions before it applied. */
  context(beforeSeq = Number.MAX_SAFE_INTEGER): HeldEntry[] {
    return applyWindows(this.held(beforeSeq), this.windows(beforeSeq));
  }

  /** The context's entries, for the engine or a fork. */
  transcript(beforeSeq = Number.MAX_SAFE_INTEGER): TranscriptEntry[] {
    return this.context(beforeSeq).map((h) => h.entry);
  }

  openWait(w: Omit<Wait, "status" | "outcome" | "resolvedSeq">): void {
    this.sql.exec(
      "INSERT INTO waits (id, kind, turn_id, seq, detail, status) VALUES (?, ?, ?, ?, ?, 'open')",
      w.id,
      w.kind,
      w.turnId,
      w.seq,
      JSON.stringify(w.detail),
    );
  }

  /** Whether a person dismissed a question of this turn, which ends the turn on purpose. */
  dismissedIn(turnId: string): boolean {
    return (
      this.sql
        .exec("SELECT 1 FROM waits WHERE turn_id = ? AND kind = 'question' AND json_extract(outcome, '$.action') = 'dismiss'", turnId)
        .toArray().length > 0
    );
  }

  /** Whether any approval or question has this id: the two share one id space. */
  hasWait(id: string): boolean {
    return this.sql.exec("SELECT 1 FROM waits WHERE id = ?", id).toArray().length > 0;
  }

  wait(id: string, kind: Wait["kind"]): Wait | null {
    const row = this.sql.exec<WaitRow>("SELECT * FROM waits WHERE id = ? AND kind = ?", id, kind).toArray()[0];
    return row ? toWait(row) : null;
  }

  /** The waits with these ids, open or closed (an AG-UI resume may name one someone else closed). */
  waitsNamed(ids: readonly string[]): Wait[] {
    if (ids.length === 0) return [];
    return this.sql
      .exec<WaitRow>(`SELECT * FROM waits WHERE id IN (${ids.map(() => "?").join(", ")}) ORDER BY seq`, ...ids)
      .toArray()
      .map(toWait);
  }

  openWaits(turnId?: string): Wait[] {
    const rows = turnId
      ? this.sql.exec<WaitRow>("SELECT * FROM waits WHERE status = 'open' AND turn_id = ? ORDER BY seq", turnId)
      : this.sql.exec<WaitRow>("SELECT * FROM waits WHERE status = 'open' ORDER BY seq");
    return rows.toArray().map(toWait);
  }

  closeWait(id: string, status: "resolved" | "cancelled", outcome: Record<string, unknown>, resolvedSeq: number): void {
    this.sql.exec(
      "UPDATE waits SET status = ?, outcome = ?, resolved_seq = ? WHERE id = ?",
      status,
      JSON.stringify(outcome),
      resolvedSeq,
      id,
    );
  }
}
