import type { AttachmentEntry, AttachmentInput, AttachmentRef } from "../../../src/api/attachments.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { FIRST_SEAT } from "../../../src/api/seats.js";
import type { MessageAccepted, PatchMessage, PostMessage } from "../../../src/api/threads.js";
import type { EventBodies, EventKind } from "../../../src/api/events.js";
import type { SendResult } from "../../../src/api/turns.js";
import { attachmentBytes, attachmentPath } from "../../../src/rules/attachments.js";
import { emptyMessageRefusal } from "../../../src/rules/message-empty.js";
import { blobSaveRefusal } from "../log/blob-store.js";
import { digestOf, type IdempotencyKeys } from "../log/idempotency.js";
import { archivedRefusal, degradedRefusal, missing, recordOnlyRefusal, runsTurns, seatRefusal } from "../refusals.js";
import type { Accepted, ThreadAccess } from "../thread-access.js";
import type { ThreadState } from "../thread-state.js";
import type { TurnDriver } from "./driver.js";
import type { TurnResult } from "../../../src/api/turns.js";

/** What the inbox uses of its Thread; it owns the `held` table. */
export type InboxThread = Pick<ThreadAccess, "config" | "sql" | "log" | "blobs" | "commits" | "tables" | "state" | "append" | "prepareOrRefuse">;

/**
 * Messages in: posted (queued for a turn, held, or steering the running one), their
 * attachments, and the held ones edited, released or deleted; and the events an engine or
 * a flow records.
 */
export class Inbox {
  constructor(
    private readonly thread: InboxThread,
    private readonly idempotency: Pick<IdempotencyKeys, "seen" | "remember">,
    private readonly turns: Pick<TurnDriver, "route" | "steer" | "kick" | "interrupt" | "answer">,
  ) {}

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  /** `onAccepted` runs inside the commit that writes the message, before anything that commit lets happen next. */
  async accept(
    message: PostMessage & { clientMessageId?: string },
    idempotencyKey?: string,
    onAccepted?: (seq: number) => void,
  ): Promise<Outcome<MessageAccepted & { replayed?: true }>> {
    if (!this.state) return missing();
    const digest = idempotencyKey ? await digestOf(message) : null;
    const files = message.attachments?.length ? await this.storeAttachments(message.attachments) : null;
    if (files && !files.ok) return files;
    const body = {
      text: message.text,
      ...(message.from ? { from: message.from } : {}),
      ...(message.clientMessageId ? { clientMessageId: message.clientMessageId } : {}),
      ...(message.hold ? { hold: true } : {}),
      ...(message.onBusy ? { onBusy: message.onBusy } : {}),
      ...(message.seat ? { seat: message.seat } : {}),
      ...(files ? { attachments: files.value } : {}),
    };
    const onBusy = message.onBusy ?? this.state.spec.onBusy;
    let interrupts = false;
    let steers = false;
    const prepared = await this.thread.prepareOrRefuse("message", body);
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<MessageAccepted & { replayed?: true }> => {
      if (this.state!.archivedAt) return archivedRefusal(this.state!);
      if (this.state!.degraded) return degradedRefusal(this.state!);
      const noSeat = message.seat ? seatRefusal(this.state!, message.seat) : null;
      if (noSeat) return noSeat;
      const running = message.hold || !runsTurns(this.state!) ? null : this.state!.turn;
      if (running && onBusy === "reject")
        return refuse(409, `thread ${this.state!.id} is running turn ${running.id}, and this message asked not to wait (onBusy: reject)`, CODES.threadBusy, { turnId: running.id });
      // Steering is for the seat whose turn runs (a message for another seat waits for that
      // seat's turn); a peer seat's own words are recorded, not answered here; attachments
      // are placed as a turn starts, so a message carrying some waits for the next one.
      const to = running ? this.turns.route(message.seat ?? null, message.from ?? null) : null;
      const answeredHere = to !== null && to.here && !to.own;
      interrupts = answeredHere && onBusy === "interrupt";
      steers = answeredHere && onBusy === "steer" && !files && to.seat === (running!.seat ?? FIRST_SEAT);
      const seen = idempotencyKey ? this.idempotency.seen(idempotencyKey, digest!, "message") : null;
      if (seen) return seen.ok ? ok({ ...seen.value, replayed: true }) : seen;
      const event = this.thread.append(prepared.value);
      onAccepted?.(event.seq);
      if (files) this.thread.tables.addAttachments(event.seq, files.value);
      if (message.hold) this.thread.sql.exec("INSERT INTO held (seq, text, sender, seat) VALUES (?, ?, ?, ?)", event.seq, message.text, message.from ?? null, message.seat ?? null);
      else if (steers) this.thread.tables.addSteer(event.seq, running!.id, message.text, message.from ?? null, message.seat ?? null);
      else if (runsTurns(this.state!)) this.thread.tables.queue(event.seq, message.text, message.from, message.seat);
      if (idempotencyKey) this.idempotency.remember(idempotencyKey, digest!, event.seq, event.ts);
      return ok({ seq: event.seq, ts: event.ts });
    });
    if (outcome.ok && steers && !outcome.value.replayed) void this.turns.steer(outcome.value.seq);
    else if (outcome.ok && !message.hold) this.turns.kick();
    // The message is queued first, so the turn after the interrupted one answers it.
    if (outcome.ok && interrupts && !outcome.value.replayed) void this.turns.interrupt();
    return outcome;
  }

  /** A message's attachments into the blob store, by hash, before its event is written; or why they are refused. */
  private async storeAttachments(inputs: readonly AttachmentInput[]): Promise<Outcome<AttachmentRef[]>> {
    const decoded = attachmentBytes(inputs, this.thread.config.attachmentMaxBytes);
    if (!decoded.ok) return decoded;
    try {
      const refs = await Promise.all(decoded.value.map((bytes) => this.thread.blobs.putBytes(bytes)));
      return ok(refs.map((r, i) => ({ name: inputs[i]!.name, mediaType: inputs[i]!.mediaType, bytes: r.bytes, sha256: r.sha256 })));
    } catch (err) {
      return blobSaveRefusal(err, "an attachment");
    }
  }

  /** The thread's attachments, oldest first, with where the engines find each. */
  attachments(): Outcome<{ attachments: AttachmentEntry[] }> {
    if (!this.state) return missing();
    return ok({ attachments: this.thread.tables.attachments().map((a) => ({ ...a, path: attachmentPath(a.seq, a.name) })) });
  }

  /** One attachment's bytes and media type, by its hash; only an attachment of this thread. */
  async attachment(sha256: string): Promise<Outcome<{ mediaType: string; name: string; bytes: Uint8Array }>> {
    if (!this.state) return missing();
    const found = this.thread.tables.attachmentBySha(sha256);
    if (!found) return refuse(404, `thread has no attachment ${sha256}`, CODES.attachmentNotFound);
    try {
      return ok({ mediaType: found.mediaType, name: found.name, bytes: await this.thread.blobs.getBytes(sha256) });
    } catch (err) {
      return refuse(503, `the blob store could not give attachment ${sha256}: ${(err as Error).message}`, CODES.blobStoreUnavailable);
    }
  }

  async editHeld(seq: number, patch: PatchMessage): Promise<Outcome<MessageAccepted>> {
    const held = this.heldOrRefusal(seq);
    if (!held.ok) return held;
    // An edit may not empty what a post could not have sent empty: its release would start a turn on nothing.
    const empty = patch.text !== undefined ? emptyMessageRefusal({ text: patch.text, attachments: this.thread.tables.attachments(seq) }) : null;
    if (empty) return empty;
    const edit = patch.text !== undefined ? await this.thread.prepareOrRefuse("message-edited", { target: seq, text: patch.text }) : null;
    if (edit && !edit.ok) return edit;
    const release = patch.hold === false ? await this.thread.prepareOrRefuse("message-released", { target: seq }) : null;
    if (release && !release.ok) return release;
    const outcome = await this.thread.commits.write((): Outcome<MessageAccepted> => {
      const still = this.heldOrRefusal(seq);
      if (!still.ok) return still;
      if (release && this.state!.degraded) return degradedRefusal(this.state!);
      let last: Accepted | null = null;
      if (edit) {
        last = this.thread.append(edit.value);
        this.thread.sql.exec("UPDATE held SET text = ? WHERE seq = ?", patch.text!, seq);
      }
      if (release) {
        last = this.thread.append(release.value);
        const held = this.thread.sql.exec<{ text: string; sender: string | null; seat: string | null }>("SELECT text, sender, seat FROM held WHERE seq = ?", seq).one();
        if (runsTurns(this.state!)) this.thread.tables.queue(seq, held.text, held.sender ?? undefined, held.seat ?? undefined);
        this.thread.sql.exec("DELETE FROM held WHERE seq = ?", seq);
      }
      return ok({ seq: last!.seq, ts: last!.ts });
    });
    if (outcome.ok && release) this.turns.kick();
    return outcome;
  }

  async deleteHeld(seq: number): Promise<Outcome<MessageAccepted>> {
    const held = this.heldOrRefusal(seq);
    if (!held.ok) return held;
    const prepared = await this.thread.prepareOrRefuse("message-deleted", { target: seq });
    if (!prepared.ok) return prepared;
    return this.thread.commits.write((): Outcome<MessageAccepted> => {
      const still = this.heldOrRefusal(seq);
      if (!still.ok) return still;
      this.thread.sql.exec("DELETE FROM held WHERE seq = ?", seq);
      const e = this.thread.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts });
    });
  }

  private heldOrRefusal(seq: number): Outcome<true> {
    if (!this.state) return missing();
    const held = this.thread.sql.exec("SELECT seq FROM held WHERE seq = ?", seq).toArray().length > 0;
    if (held) return ok(true);
    const row = this.thread.log.get(seq);
    if (!row || row.kind !== "message") return refuse(404, `thread has no message ${seq}`, CODES.messageNotFound);
    return refuse(409, `message ${seq} is not held: only held messages can be edited or deleted`, CODES.messageNotHeld);
  }

  /** Appends an event on behalf of an engine or a flow (tool results, cycle events). */
  async record<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<MessageAccepted>> {
    if (!this.state) return missing();
    const prepared = await this.thread.prepareOrRefuse(kind, body);
    if (!prepared.ok) return prepared;
    return this.thread.commits.write(() => {
      const e = this.thread.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts });
    });
  }

  /** Posts a message and waits for the turn that answers it (`POST /threads/:id/send`). */
  async send(message: PostMessage): Promise<Outcome<SendResult>> {
    const recordOnly = this.state ? recordOnlyRefusal(this.state) : null;
    if (recordOnly) return recordOnly;
    // Waiting from the message's own commit: a message a peer's seat answers can be settled
    // by the next commit of the same batch, before this call would hear its answer.
    let answered: Promise<Outcome<TurnResult>> | null = null;
    const accepted = await this.accept(message, undefined, (seq) => (answered = this.turns.answer(seq)));
    if (!accepted.ok) return accepted;
    const { seq, ts } = accepted.value;
    const result = await answered!;
    return result.ok ? ok({ seq, ts, ...result.value }) : result;
  }
}
