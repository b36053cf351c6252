import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { FIRST_SEAT, type Placement, type ReplaceResult, type Seat, type SeatList } from "../../../src/api/seats.js";
import type { EngineModel } from "../../../src/api/threads.js";
import type { Handoffs } from "./handoffs.js";
import { archivedRefusal, missing, seatRefusal } from "../refusals.js";
import { restage, type ThreadAccess } from "../thread-access.js";
import { seatModel, seatNamed, shownSeats, type ThreadState } from "../thread-state.js";

/** A seat's engine, model and placement, resolved by the router with a spawn's rules. */
export type SeatTarget = EngineModel & { placement: Placement };

/** What the seats need of the turn driver. */
export interface SeatTurns {
  closeSeat(name: string, why: string): Promise<void>;
  kick(): void;
}

/**
 * The seats of one Thread (docs/seats.md): joining, replacing and removing them, each an
 * event written in the Thread's commit queue, and which seat holds the thread. The turn
 * driver reads them to decide whose turn it is and on what it runs.
 */
export class Seats {
  constructor(
    private readonly thread: Pick<ThreadAccess, "append" | "change" | "commits" | "prepareOrRefuse" | "saveState" | "state" | "syncCatalogNow" | "tables">,
    private readonly turns: SeatTurns,
    private readonly handoffs: Handoffs,
  ) {}

  list(): Outcome<SeatList> {
    const s = this.thread.state();
    return s ? ok({ seats: shownSeats(s), holder: s.holder }) : missing();
  }

  async join(name: string, target: SeatTarget, role: string | null): Promise<Outcome<Seat>> {
    const refusal = (s: ThreadState) =>
      s.archivedAt
        ? archivedRefusal(s)
        : seatNamed(s, name)
          ? refuse(409, `thread ${s.id} has a seat ${name} already (a removed seat keeps its name)`, CODES.seatExists)
          : null;
    const outcome = await this.thread.change("seat-joined", { seat: name, ...target, role }, refusal, (s, e) => {
      s.seats.push({ name, ...target, role, state: "active", joinedSeq: e.seq, replacedSeqs: [], removedSeq: null, generation: 0 });
    });
    return outcome.ok ? ok(this.shown(name)) : outcome;
  }

  /** Changes a seat's engine, model or placement; `changed: false`, and nothing written, when nothing differs. */
  async replace(name: string, target: SeatTarget): Promise<Outcome<ReplaceResult>> {
    const s = this.thread.state();
    if (!s) return missing();
    const unchanged = (t: ThreadState) => {
      const seat = seatNamed(t, name)!;
      const now = seatModel(t, seat);
      return now.engine === target.engine && now.model === target.model && seat.placement === target.placement;
    };
    const refusal = (t: ThreadState) => seatRefusal(t, name) ?? (t.archivedAt ? archivedRefusal(t) : null);
    const early = refusal(s);
    if (early) return early;
    if (unchanged(s)) return ok({ changed: false, seat: this.shown(name) });
    const shape = (t: ThreadState) => {
      const seat = seatNamed(t, name)!;
      return { seat: name, from: { ...seatModel(t, seat), placement: seat.placement }, to: target };
    };
    const prepared = await this.thread.prepareOrRefuse("seat-replaced", shape(s));
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<boolean> => {
      const t = this.thread.state()!;
      const late = refusal(t);
      if (late) return late;
      // Another replace to the same target landed between: nothing is left to change.
      if (unchanged(t)) return ok(false);
      // Written as the seat is now: a small body, never stored apart.
      const e = this.thread.append({ ...prepared.value, text: JSON.stringify(shape(t)) });
      const seat = seatNamed(t, name)!;
      Object.assign(seat, target);
      seat.replacedSeqs = [...seat.replacedSeqs, e.seq];
      seat.generation += 1;
      this.thread.saveState();
      return ok(true);
    });
    if (!outcome.ok) return outcome;
    if (outcome.value) await this.thread.syncCatalogNow();
    return ok({ changed: outcome.value, seat: this.shown(name) });
  }

  /**
   * Removes a seat: it keeps its history (and its name) and takes nothing more. Its running
   * turn ends with class `closed`; an offer it made or was made is cancelled; if it held
   * the thread, the earliest-joined active seat holds it now.
   */
  async remove(name: string): Promise<Outcome<{ seat: Seat; holder: string; seq: number; ts: string }>> {
    const s = this.thread.state();
    if (!s) return missing();
    const refusal = (t: ThreadState): Outcome<never> | null => {
      const not = seatRefusal(t, name) ?? (t.archivedAt ? archivedRefusal(t) : null);
      if (not) return not;
      if (t.seats.filter((x) => x.state === "active").length === 1)
        return refuse(409, `seat ${name} is the thread's last seat: a thread keeps one`, CODES.lastSeat);
      return null;
    };
    const early = refusal(s);
    if (early) return early;
    const successor = (t: ThreadState) => (t.holder === name ? t.seats.find((x) => x.state === "active" && x.name !== name)!.name : t.holder);
    // Read as the commit sees the thread: the seat's turn may have started or ended since the request came.
    const body = (t: ThreadState) => {
      const running = t.turn && (t.turn.seat ?? FIRST_SEAT) === name ? t.turn.id : undefined;
      return { seat: name, holder: successor(t), ...(running ? { turnId: running } : {}) };
    };
    const prepared = await this.thread.prepareOrRefuse("seat-removed", body(s));
    if (!prepared.ok) return prepared;
    const cancel = await this.handoffs.prepareCancel(name, `seat ${name} was removed`);
    const outcome = await this.thread.commits.write((): Outcome<{ holder: string; seq: number; ts: string }> => {
      const t = this.thread.state()!;
      const late = refusal(t);
      if (late) return late;
      const holder = successor(t);
      // The holder is decided now (a handoff may have moved it since): a small body, never stored apart.
      const e = this.thread.append({ ...prepared.value, text: JSON.stringify(body(t)) });
      const seat = seatNamed(t, name)!;
      seat.state = "removed";
      seat.removedSeq = e.seq;
      t.holder = holder;
      this.handoffs.applyCancel(cancel);
      restage(this.thread);
      return ok({ holder, seq: e.seq, ts: e.ts });
    });
    if (!outcome.ok) return outcome;
    await this.turns.closeSeat(name, `seat ${name} was removed`);
    await this.thread.syncCatalogNow();
    // Messages that were for it wait for the holder now.
    this.turns.kick();
    return ok({ seat: this.shown(name), ...outcome.value });
  }

  private shown(name: string): Seat {
    return shownSeats(this.thread.state()!).find((x) => x.name === name)!;
  }
}
