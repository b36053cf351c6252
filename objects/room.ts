import { DurableObject } from "cloudflare:workers";
import { CODES } from "../src/api/errors.js";
import { ok, refuse, type Outcome } from "../src/api/outcome.js";
import type { PostedReview, Round, RoomCore, Verdict } from "../src/api/rooms.js";
import type { TurnFailure } from "../src/api/engine.js";
import type { TurnStatus } from "../src/api/turns.js";
import type { Env } from "../src/platform/env.js";
import { threadOf } from "../src/platform/stubs.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { ROUNDS_SCHEMA, Rounds } from "./room/rounds.js";

type Stored = Omit<RoomCore, "rounds">;

/** How often a running round checks that its reviewer's turn is still going, in case the thread's report of its end was lost. */
const WATCH_MS = 30_000;
/** An arm that has not finished in this long died: the next arm of the same pull request takes it over. Longer than a first fetch may take (ten minutes, bindings/git/mirror.ts). */
export const ARM_STALE_MS = 15 * 60_000;

const NO_VERDICT = "the reviewer's turn ended without calling submit_verdict";

/**
 * One review room (docs/rooms.md): the single writer of its rounds. Whether a round may
 * start, which round a verdict belongs to, and whether a finalize may post are decided
 * here, in one commit each; the flows (src/flows/review.ts) do the outside work around
 * these decisions: the worktree, the thread, the code host.
 */
export class Room extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly commits: CommitQueue;
  private readonly rounds: Rounds;
  /** The round a finalize is posting, so two finalizes never post twice; in memory, as a post outlives no restart. */
  private finalizing: number | null = null;
  /** Watches of a running round that found its reviewer idle in a row. */
  private idleSeen = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);` + ROUNDS_SCHEMA);
    this.rounds = new Rounds(this.sql);
    this.commits = new CommitQueue(ctx.storage);
  }

  private stored(): Stored | null {
    const r = this.sql.exec("SELECT value FROM settings WHERE key = 'room'").toArray()[0];
    return r ? (JSON.parse(r.value as string) as Stored) : null;
  }

  private save(room: Stored): void {
    this.sql.exec("INSERT INTO settings (key, value) VALUES ('room', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", JSON.stringify(room));
  }

  private core(room: Stored): RoomCore {
    return { ...room, rounds: this.rounds.briefs() };
  }

  info(): RoomCore | null {
    const room = this.stored();
    return room ? this.core(room) : null;
  }

  /**
   * Makes the room on its first arm. `takeOver`: this call should make the room's thread
   * (the room is new, or an earlier arm failed or died before it was armed), holding the
   * arm `token` that `armed` and `armFailed` must show: an arm that was taken over for
   * being slow can no longer arm the room, nor let a third arm in.
   */
  arm(init: Omit<Stored, "state" | "threadId" | "armingSince">): Promise<{ room: RoomCore; created: boolean; takeOver: boolean; token: string | null }> {
    return this.commits.write(() => {
      const now = new Date().toISOString();
      const room = this.stored();
      if (!room) {
        const made: Stored = { ...init, state: "arming", threadId: null, armingSince: now };
        this.save(made);
        return { room: this.core(made), created: true, takeOver: true, token: now };
      }
      const stale = room.state === "arming" && (room.armingSince === null || Date.parse(room.armingSince) < Date.now() - ARM_STALE_MS);
      if (!stale) return { room: this.core(room), created: false, takeOver: false, token: null };
      // Still a different token should two arms come in the same millisecond.
      const token = room.armingSince === now ? new Date(Date.parse(now) + 1).toISOString() : now;
      const taken = { ...room, armingSince: token };
      this.save(taken);
      return { room: this.core(taken), created: false, takeOver: true, token };
    });
  }

  /** The room's thread and reviewer seat are in place: armed, unless another arm took over since (null). */
  armed(threadId: string, token: string): Promise<RoomCore | null> {
    return this.commits.write(() => {
      const stored = this.stored()!;
      if (stored.state !== "arming" || stored.armingSince !== token) return null;
      const room = { ...stored, state: "armed" as const, threadId, armingSince: null };
      this.save(room);
      return this.core(room);
    });
  }

  /** An arm that failed: the next arm takes over at once, unless another already has. */
  armFailed(token: string): Promise<void> {
    return this.commits.write(() => {
      const room = this.stored();
      if (room?.state === "arming" && room.armingSince === token) this.save({ ...room, armingSince: null });
    });
  }

  round(n: number): Outcome<Round> {
    const round = this.rounds.get(n);
    return round ? ok(round) : refuse(404, `room ${this.stored()?.id ?? ""} has no round ${n}`, CODES.roundNotFound, { rounds: this.rounds.briefs().length });
  }

  allRounds(): Round[] {
    return this.rounds.all();
  }

  newestRound(): Round | null {
    return this.rounds.newest();
  }

  runningRound(): Round | null {
    return this.rounds.running();
  }

  /** Whether a round could start now: what `beginRound` refuses, asked before the worktree moves. */
  roundRefusal(): Outcome<null> {
    const room = this.stored();
    if (!room || room.state !== "armed" || !room.threadId)
      return refuse(409, `room ${room?.id ?? ""} is not armed: its reviewer thread is not in place; arm it again (POST /workspaces/:name/rooms)`, CODES.roomNotArmed);
    const running = this.rounds.running();
    if (running) return refuse(409, `round ${running.n} of room ${room.id} is running: wait for its verdict`, CODES.roundRunning, { n: running.n });
    return ok(null);
  }

  /** Starts round n+1 at `head`, if no round runs; an older ready round is superseded. */
  beginRound(asked: { prompt: string | null; seat: string; head: string; base: string }): Promise<Outcome<Round>> {
    return this.commits.write((): Outcome<Round> => {
      const refusal = this.roundRefusal();
      if (!refusal.ok) return refusal;
      const round = this.rounds.add({ ...asked, threadId: this.stored()!.threadId!, createdAt: new Date().toISOString() });
      this.idleSeen = 0;
      return ok(round);
    }).then(async (r) => {
      if (r.ok) await this.ctx.storage.setAlarm(Date.now() + WATCH_MS);
      return r;
    });
  }

  /** The message that asks for round `n` is in the reviewer's log at `seq`. */
  roundAsked(n: number, seq: number): Promise<void> {
    return this.commits.write(() => this.rounds.setMessage(n, seq));
  }

  /** Round `n` could not be asked for (its message was refused), or its reviewer failed. */
  failRound(n: number, why: string): Promise<void> {
    return this.commits.write(() => {
      if (this.rounds.get(n)?.state === "running") this.rounds.fail(n, why);
    });
  }

  /**
   * `submit_verdict` from the room's thread: the running round's verdict, once, from the
   * turn that answers the round's message (`inputs`, the turn's messages): a turn that
   * answers someone's chat gives no round its verdict.
   */
  submitVerdict(threadId: string, inputs: number[], verdict: Verdict): Promise<Outcome<Round>> {
    return this.commits.write((): Outcome<Round> => {
      const room = this.stored();
      if (!room || room.threadId !== threadId) return refuse(409, `thread ${threadId} is not room ${room?.id ?? ""}'s reviewer thread`, CODES.noRoundRunning);
      const running = this.rounds.running();
      if (!running) return refuse(409, `no round of room ${room.id} is running: nothing asked for a verdict`, CODES.noRoundRunning);
      if (running.messageSeq !== null && !inputs.includes(running.messageSeq))
        return refuse(409, `this turn does not answer round ${running.n}'s message (seq ${running.messageSeq}): only that turn gives its verdict`, CODES.noRoundRunning);
      this.rounds.ready(running.n, verdict);
      return ok(this.rounds.get(running.n)!);
    });
  }

  /**
   * The reviewer's thread ended a turn (its report, src/flows is not involved): a round
   * whose message that turn answered and that has no verdict failed.
   */
  turnEnded(threadId: string, inputs: number[], failure: TurnFailure | null): Promise<void> {
    return this.commits.write(() => {
      const running = this.rounds.running();
      if (!running || running.threadId !== threadId || running.messageSeq === null || !inputs.includes(running.messageSeq)) return;
      this.rounds.fail(running.n, failure ? `the reviewer's turn failed (${failure.class}): ${failure.error}` : NO_VERDICT);
    });
  }

  /**
   * The safety net for a lost report of the turn's end: a running round whose reviewer
   * thread is seen twice, a watch apart, with no turn and nothing queued, failed; and a
   * round whose message was never recorded (the request that started it died midway)
   * failed once it is two watches old.
   */
  override async alarm(): Promise<void> {
    const running = this.rounds.running();
    if (!running) return;
    if (running.messageSeq === null) {
      if (Date.parse(running.createdAt) < Date.now() - 2 * WATCH_MS) await this.failRound(running.n, "the round's message was never sent to the reviewer (the request that started the round ended first)");
      else await this.ctx.storage.setAlarm(Date.now() + WATCH_MS);
      return;
    }
    let idle = false;
    try {
      const status = (await threadOf(this.env, running.threadId).turnStatus()) as Outcome<TurnStatus>;
      idle = !status.ok || (!status.value.running && status.value.queued === 0);
    } catch (err) {
      console.error(`room: the reviewer thread ${running.threadId} did not answer its round's watch: ${(err as Error).message}`);
    }
    this.idleSeen = idle ? this.idleSeen + 1 : 0;
    if (this.idleSeen >= 2) await this.failRound(running.n, `${NO_VERDICT} (seen by the room's watch)`);
    else await this.ctx.storage.setAlarm(Date.now() + WATCH_MS);
  }

  /**
   * May round `n` (default: the newest) be posted now? `done`: it was already, with its
   * review. Otherwise it is held for this finalize until `endFinalize`.
   */
  beginFinalize(n: number | undefined): Outcome<{ round: Round; done: boolean }> {
    const newest = this.rounds.newest();
    const asked = n !== undefined ? this.round(n) : newest ? ok(newest) : refuse(409, "the room has no round yet: start one (POST /rooms/:id/rounds)", CODES.verdictNotReady, { state: null });
    if (!asked.ok) return asked;
    const round = asked.value;
    if (round.state === "finalized") return ok({ round, done: true });
    // A round exists, so the newest does.
    const latest = newest!.n;
    if (round.state === "superseded" || latest > round.n) return refuse(409, `round ${round.n} was superseded by round ${latest}: finalize the newest round`, CODES.roundSuperseded, { newest: latest });
    if (round.state !== "ready") return refuse(409, `round ${round.n} has no verdict to post (${round.state}${round.failure ? `: ${round.failure}` : ""})`, CODES.verdictNotReady, { state: round.state });
    if (this.finalizing !== null) return refuse(409, `round ${this.finalizing} is being posted: ask again when that answers`, CODES.roundFinalizing, { n: this.finalizing });
    this.finalizing = round.n;
    return ok({ round, done: false });
  }

  /** The finalize of round `n` answered: posted (`review`), or refused by the code host (null: the round stays ready). */
  endFinalize(n: number, review: PostedReview | null): Promise<Round> {
    if (!review) {
      this.finalizing = null;
      return Promise.resolve(this.rounds.get(n)!);
    }
    return this.commits
      .write(() => {
        this.rounds.finalized(n, review);
        return this.rounds.get(n)!;
      })
      .finally(() => (this.finalizing = null));
  }
}
