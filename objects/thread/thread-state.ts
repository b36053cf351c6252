import type { Cost, EngineModel, ShownSpec, ThreadHead, ThreadRow, ThreadSpec, ThreadStage, ThreadSummary } from "../../src/api/threads.js";
import type { LoopState } from "../../src/api/turns.js";
import type { CompactionMode, WindowRefusal } from "../../src/api/compaction.js";
import { FIRST_SEAT, type Seat } from "../../src/api/seats.js";
import type { OperationOutcome } from "../../src/api/operations.js";

export interface ActiveTurn {
  id: string;
  index: number;
  startedAt: string;
  inputs: number[];
  /** The seat whose turn it is (absent in a state saved before seats: the first). */
  seat?: string;
  /** How many wakes led to this turn (its inputs' deepest wake): events it writes carry it on (docs/subscriptions.md). */
  wakeDepth?: number;
}

/** A seat as the Thread keeps it (docs/seats.md); `holds` is derived from `holder`. */
export type SeatState = Omit<Seat, "holds"> & {
  /** Counts the changes after which the seat's engine must not resume its session: a replace, a summary handoff. */
  generation: number;
};

/** Names the body a turn could not save: `key` in the blob store, the turn's `index`, the event kind as `tag`. */
export interface DegradedRef {
  key: string;
  index: number;
  tag: string;
}

/** The context window's bookkeeping (objects/thread/compaction/window.ts). */
export interface WindowState {
  /** Each model's window in tokens, as its engine last reported it. */
  windows: Record<string, number>;
  /**
   * The context's size at a point of the transcript (its newest row then): the provider's
   * count at a model call, or what a reduction or a dropped turn left. Entries after `row`
   * are estimated on top of it.
   */
  base: { row: number; tokens: number } | null;
  /** A line the context crossed that no reduction has answered yet; `deadlineAt` (epoch ms) for a forced one. */
  pending: { seq: number; forced: boolean; tokens: number; window: number; deadlineMs: number; deadlineAt: number | null; options: CompactionMode[] } | null;
  /** The turn index of each recent reduction round, for WindowThrash. */
  rounds: number[];
  /**
   * A reduction ran since the last turn started: an engine with a session of its own starts
   * a new one from the reduced context. `forced` when a forced window made it: the session
   * was too full to resume.
   */
  reseed: false | "asked" | "forced";
  /**
   * The engine's own prompt and tools, in tokens: a counted call less the estimate of the
   * transcript its session held. Measured only while the session holds the whole reduced
   * transcript (`summarized` false): after an engine compacted its own session, the
   * difference says nothing, and the last measure stands.
   */
  ownTokens?: number;
  /** The engine compacted its session since it was started from the transcript. */
  summarized?: boolean;
  refusals: { seq: number; ts: string; refusal: WindowRefusal; text: string }[];
}

/** What a Thread object keeps about itself besides its log: one row, held in memory too. */
export interface ThreadState {
  id: string;
  spec: ThreadSpec;
  parent: string | null;
  forkedAtSeq: number | null;
  createdAt: string;
  archivedAt: string | null;
  archiveReason: string | null;
  stage: ThreadStage;
  cost: Cost;
  seatLease: string | null;
  /** The turn running now, if any; still set after a crash, which is how a lost turn is found. */
  turn: ActiveTurn | null;
  /** Turns started so far. */
  turns: number;
  degraded: DegradedRef | null;
  loop: LoopState | null;
  /** Where the thread is on its failover chain: 0 is the spec's engine and model, n is `fallback[n-1]`. */
  chainStep: number;
  /** Absent until the first model call reported usage. */
  window?: WindowState;
  /** The seat lease was let go, and no message came since: a reviewer or fixer thread is then `finished`. */
  leaseReleased?: boolean;
  /**
   * This thread is a delegation's child: its first turn's end is the operation's outcome
   * (`outcome`, kept until the parent took it, `reported`). docs/operations.md.
   */
  delegation?: { parent: string; operation: string; outcome: OperationOutcome | null; reported: boolean };
  /** Every seat the thread has had, in the order they joined; the first is made from the spec. */
  seats: SeatState[];
  /** The seat the thread's messages go to when they name none. */
  holder: string;
  /**
   * Which seat ran the last turn, on what, at which generation (`runKey`): an engine
   * resumes its own session only when the next turn's key is the same. Absent in a state
   * saved before seats, which resumes as it did.
   */
  lastRun?: string;
}

/** A state saved before turns existed lacks their fields. */
export function loadState(json: string): ThreadState {
  const s = JSON.parse(json) as Partial<ThreadState> & Omit<ThreadState, "turn" | "turns" | "degraded" | "loop" | "chainStep">;
  const spec = { ...s.spec, fallback: s.spec.fallback ?? null, approvalTimeoutMs: s.spec.approvalTimeoutMs ?? null, questionTimeoutMs: s.spec.questionTimeoutMs ?? null, onBusy: s.spec.onBusy ?? "queue" };
  const seats = s.seats ?? [firstSeat(spec, 1)];
  return { ...s, spec, turn: s.turn ?? null, turns: s.turns ?? 0, degraded: s.degraded ?? null, loop: s.loop ?? null, chainStep: s.chainStep ?? 0, seats, holder: s.holder ?? FIRST_SEAT };
}

/** The seat a thread starts with, from its spawn spec (joined at its `spawn` event). */
export function firstSeat(spec: ThreadSpec, spawnSeq: number): SeatState {
  return { name: FIRST_SEAT, engine: spec.engine, model: spec.model, placement: "host", role: spec.role, state: "active", joinedSeq: spawnSeq, replacedSeqs: [], removedSeq: null, generation: 0 };
}

/** The first seat, never replaced, is the one the spec's failover chain moves; a replace takes it off the chain. */
export function onChain(seat: SeatState): boolean {
  return seat.name === FIRST_SEAT && seat.replacedSeqs.length === 0;
}

/** The engine and model a seat's turns run on now: its own, or for the chain's seat, where failover has moved it. */
export function seatModel(s: ThreadState, seat: SeatState): EngineModel {
  if (!onChain(seat)) return { engine: seat.engine, model: seat.model };
  return s.chainStep === 0 ? { engine: s.spec.engine, model: s.spec.model } : s.spec.fallback![s.chainStep - 1]!;
}

export function seatNamed(s: ThreadState, name: string): SeatState | undefined {
  return s.seats.find((seat) => seat.name === name);
}

/** The engine and model the thread's turns run on now: those of the seat that holds it. */
export function activeModel(s: ThreadState): EngineModel {
  return seatModel(s, seatNamed(s, s.holder)!);
}

/** Names one seat's run on one engine and model: the same key twice lets the engine resume its session. */
export function runKey(s: ThreadState, seat: SeatState): string {
  const m = seatModel(s, seat);
  return `${seat.name}|${m.engine}|${m.model}|${seat.generation}`;
}

/** The seats as `GET /threads/:id/seats` shows them. */
export function shownSeats(s: ThreadState): Seat[] {
  return s.seats.map((seat) => ({
    name: seat.name,
    ...seatModel(s, seat),
    placement: seat.placement,
    role: seat.role,
    state: seat.state,
    holds: seat.name === s.holder,
    joinedSeq: seat.joinedSeq,
    replacedSeqs: seat.replacedSeqs,
    removedSeq: seat.removedSeq,
  }));
}

export const STATE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS thread (
    one   INTEGER PRIMARY KEY CHECK (one = 1),
    state TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS held (
    seq    INTEGER PRIMARY KEY,
    text   TEXT NOT NULL,
    sender TEXT,
    seat   TEXT
  );
  CREATE TABLE IF NOT EXISTS idempotency (
    key    TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    ts     TEXT NOT NULL
  );
`;

export function summarize(s: ThreadState, lastSeq: number, updatedAt: string): ThreadSummary {
  return {
    id: s.id,
    title: s.spec.title,
    role: s.spec.role,
    type: s.spec.type,
    workspace: s.spec.workspace,
    parent: s.parent,
    // The engine and model turns run on now: the spec's, or a fallback after a failover.
    ...activeModel(s),
    stage: s.stage,
    archived: s.archivedAt !== null,
    seatLease: s.seatLease,
    createdAt: s.createdAt,
    updatedAt,
    lastSeq,
    cost: s.cost,
    ...(s.spec.pr ? { pr: { repo: s.spec.pr.repo, number: s.spec.pr.number, room: s.spec.pr.room, worktree: s.spec.pr.worktreeId } } : {}),
  };
}

/** The spec as it may be shown (rows, the log): proxyEnv values may carry credentials of the caller's proxy, so only its names are. */
export function shownSpec(full: ThreadSpec): ShownSpec {
  const { proxyEnv, ...spec } = full;
  return { ...spec, proxyEnv: proxyEnv ? Object.keys(proxyEnv) : null };
}

/** What a thread is, without what it did: its identity, place and lease. */
export function headOf(s: ThreadState): ThreadHead {
  return {
    id: s.id,
    type: s.spec.type,
    role: s.spec.role,
    workspace: s.spec.workspace,
    parent: s.parent,
    seatLease: s.seatLease,
    title: s.spec.title,
    createdAt: s.createdAt,
  };
}

export function toRow(s: ThreadState, lastSeq: number, updatedAt: string, held: number[]): ThreadRow {
  return {
    ...summarize(s, lastSeq, updatedAt),
    spec: shownSpec(s.spec),
    forkedAtSeq: s.forkedAtSeq,
    turn: s.turn ? { turnId: s.turn.id, index: s.turn.index, startedAt: s.turn.startedAt } : null,
    turns: s.turns,
    degraded: s.degraded,
    archivedAt: s.archivedAt,
    archiveReason: s.archiveReason,
    heldMessages: held,
  };
}
