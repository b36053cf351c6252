import type { Cost, ThreadRow, ThreadSpec, ThreadStage, ThreadSummary } from "../../src/api/threads.js";

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
    engine: s.spec.engine,
    model: s.spec.model,
    stage: s.stage,
    archived: s.archivedAt !== null,
    seatLease: s.seatLease,
    createdAt: s.createdAt,
    updatedAt,
    lastSeq,
    cost: s.cost,
  };
}

export function toRow(s: ThreadState, lastSeq: number, updatedAt: string, held: number[]): ThreadRow {
  const { proxyEnv, ...spec } = s.spec;
  return {
    ...summarize(s, lastSeq, updatedAt),
    // proxyEnv values may carry credentials of the caller's proxy: only its names are shown.
    spec: { ...spec, proxyEnv: proxyEnv ? Object.keys(proxyEnv) : null },
    forkedAtSeq: s.forkedAtSeq,
    archivedAt: s.archivedAt,
    archiveReason: s.archiveReason,
    heldMessages: held,
  };
}
