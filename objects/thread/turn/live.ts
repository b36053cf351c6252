import type { TurnInput } from "../../../src/api/engine.js";
import type { TurnResult } from "../../../src/api/turns.js";
import type { Outcome } from "../../../src/api/outcome.js";
import type { TurnRunner, TurnEnd } from "./runner.js";

/** A turn this object instance is running: the engine's report stream and what /send waits for. */
export interface LiveTurn {
  id: string;
  index: number;
  inputs: number[];
  /** seq of its `turn-started`: its transcript entries come after it. */
  startedSeq: number;
  /** The messages themselves, for a retry on a fallback model. */
  messages: TurnInput[];
  /** The seat whose turn it is. */
  seat: string;
  /** Its view of the transcript labels other seats and senders (src/rules/seat-view.ts). */
  labelled: boolean;
  /** The turn answers the loop's prompt, so it counts as one of the loop's turns. */
  loopTurn: boolean;
  /** The context could not be made to fit: the turn's entries leave the transcript when it ends, so the next message does not meet the same wall. */
  dropsContext: boolean;
  runner: TurnRunner;
  lastReply: { seq: number; text: string } | null;
  done: Promise<TurnEnd>;
}

/**
 * What this instance knows of its turn and no table keeps (memory only: a new instance
 * runs no turn). The driver owns it; the turn's start, end, steering and reports share it.
 */
export class TurnSlot {
  live: LiveTurn | null = null;
  /** Set while a turn is being started, so two messages cannot start two turns. */
  starting = false;
  /** Settles once the turn being started runs (or could not start). */
  start: Promise<void> = Promise.resolve();
  /** The queued nudge follows a stalled turn of the loop (memory only: a restart pauses loops anyway). */
  nudgedLoop = false;
  /** When this instance's running turn last had its keep-alive. */
  keptAt: number | null = null;
  /** `/send` callers, by the seq of their message, until a turn answers it (or none will). */
  private readonly sendWaiters = new Map<number, (r: Outcome<TurnResult>) => void>();

  /** The end of the turn that takes the message at `seq`, for `/send`. */
  answer(seq: number): Promise<Outcome<TurnResult>> {
    return new Promise<Outcome<TurnResult>>((resolve) => this.sendWaiters.set(seq, resolve));
  }

  answerWaiters(seqs: Iterable<number>, result: Outcome<TurnResult>): void {
    for (const seq of seqs) {
      const waiter = this.sendWaiters.get(seq);
      this.sendWaiters.delete(seq);
      waiter?.(result);
    }
  }

  /** Every message a sender still waits on. */
  waiting(): number[] {
    return [...this.sendWaiters.keys()];
  }

  /** The senders of `seqs` wait on the message at `to` instead. */
  moveWaiters(seqs: Iterable<number>, to: number): void {
    for (const seq of seqs) {
      const waiter = this.sendWaiters.get(seq);
      this.sendWaiters.delete(seq);
      if (waiter) this.sendWaiters.set(to, waiter);
    }
  }
}
