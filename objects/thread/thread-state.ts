import type { Cost, EngineModel, ShownSpec, ThreadRow, ThreadSpec, ThreadStage, ThreadSummary } from "../../src/api/threads.js";
import type { LoopState } from "../../src/api/turns.js";
import type { CompactionMode, WindowRefusal } from "../../src/api/compaction.js";

export interface ActiveTurn {
  id: string;
  index: number;
  startedAt: string;
  inputs: number[];
}

/** Names the body a turn could not save: `key` in the blob store, the turn's `index`, the event kind as `tag`. */
export interface DegradedRef {
  key: string;
  index: number;
  tag: string;
}

/** The context window's bookkeeping (objects/thread/compaction.ts). */
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
}

/** A state saved before turns existed lacks their fields. */
export function loadState(json: string): ThreadState {
  const s = JSON.parse(json) as Partial<ThreadState> & Omit<ThreadState, "turn" | "turns" | "degraded" | "loop" | "chainStep">;
  const spec = { ...s.spec, fallback: s.spec.fallback ?? null, approvalTimeoutMs: s.spec.approvalTimeoutMs ?? null, questionTimeoutMs: s.spec.questionTimeoutMs ?? null, onBusy: s.spec.onBusy ?? "queue" };
  return { ...s, spec, turn: s.turn ?? null, turns: s.turns ?? 0, degraded: s.degraded ?? null, loop: s.loop ?? null, chainStep: s.chainStep ?? 0 };
}

/** The engine and model the thread's turns run on now. */
export function activeModel(s: ThreadState): EngineModel {
  return s.chainStep === 0 ? { engine: s.spec.engine, model: s.spec.model } : s.spec.fallback![s.chainStep - 1]!;
}

export const STATE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS thread (
    one   INTEGER PRIMARY KEY CHECK (one = 1),
    state TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS held (
    seq  INTEGER PRIMARY KEY,
    text TEXT NOT NULL
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
  };
}

/** The spec as it may be shown (rows, the log): proxyEnv values may carry credentials of the caller's proxy, so only its names are. */
export function shownSpec(full: ThreadSpec): ShownSpec {
  const { proxyEnv, ...spec } = full;
  return { ...spec, proxyEnv: proxyEnv ? Object.keys(proxyEnv) : null };
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
