import type { PostedReview, Round, RoundBrief, RoundState, Verdict } from "../../src/api/rooms.js";

export const ROUNDS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS rounds (
    n INTEGER PRIMARY KEY,
    state TEXT NOT NULL,
    prompt TEXT,
    seat TEXT NOT NULL,
    head TEXT NOT NULL,
    base TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    message_seq INTEGER,
    verdict TEXT,
    failure TEXT,
    review TEXT,
    created_at TEXT NOT NULL,
    ready_at TEXT
  );
`;

type Row = Record<string, SqlStorageValue>;

function roundOf(r: Row): Round {
  return {
    n: r.n as number,
    state: r.state as RoundState,
    prompt: (r.prompt as string | null) ?? null,
    seat: r.seat as string,
    head: r.head as string,
    base: r.base as string,
    threadId: r.thread_id as string,
    messageSeq: (r.message_seq as number | null) ?? null,
    verdict: r.verdict ? (JSON.parse(r.verdict as string) as Verdict) : null,
    failure: (r.failure as string | null) ?? null,
    review: r.review ? (JSON.parse(r.review as string) as PostedReview) : null,
    createdAt: r.created_at as string,
    readyAt: (r.ready_at as string | null) ?? null,
  };
}

/** A room's rounds, in its SQLite: read straight from the table, so a write that rolled back leaves nothing behind in memory. */
export class Rounds {
  constructor(private readonly sql: SqlStorage) {}

  get(n: number): Round | null {
    const r = this.sql.exec("SELECT * FROM rounds WHERE n = ?", n).toArray()[0];
    return r ? roundOf(r) : null;
  }

  newest(): Round | null {
    const r = this.sql.exec("SELECT * FROM rounds ORDER BY n DESC LIMIT 1").toArray()[0];
    return r ? roundOf(r) : null;
  }

  running(): Round | null {
    const r = this.sql.exec("SELECT * FROM rounds WHERE state = 'running' ORDER BY n DESC LIMIT 1").toArray()[0];
    return r ? roundOf(r) : null;
  }

  all(): Round[] {
    return this.sql.exec("SELECT * FROM rounds ORDER BY n").toArray().map(roundOf);
  }

  briefs(): RoundBrief[] {
    return this.sql
      .exec("SELECT n, state, head, created_at FROM rounds ORDER BY n")
      .toArray()
      .map((r) => ({ n: r.n as number, state: r.state as RoundState, head: r.head as string, createdAt: r.created_at as string }));
  }

  /** Inside a commit: the next round, running; every ready round before it is superseded (only the newest is finalized). */
  add(round: Omit<Round, "n" | "state" | "verdict" | "failure" | "review" | "readyAt" | "messageSeq">): Round {
    const n = ((this.sql.exec("SELECT MAX(n) AS n FROM rounds").one().n as number | null) ?? 0) + 1;
    this.sql.exec("UPDATE rounds SET state = 'superseded' WHERE state = 'ready'");
    this.sql.exec(
      "INSERT INTO rounds (n, state, prompt, seat, head, base, thread_id, created_at) VALUES (?, 'running', ?, ?, ?, ?, ?, ?)",
      n,
      round.prompt,
      round.seat,
      round.head,
      round.base,
      round.threadId,
      round.createdAt,
    );
    return this.get(n)!;
  }

  setMessage(n: number, seq: number): void {
    this.sql.exec("UPDATE rounds SET message_seq = ? WHERE n = ?", seq, n);
  }

  ready(n: number, verdict: Verdict): void {
    this.sql.exec("UPDATE rounds SET state = 'ready', verdict = ?, ready_at = ? WHERE n = ?", JSON.stringify(verdict), verdict.submittedAt, n);
  }

  fail(n: number, why: string): void {
    this.sql.exec("UPDATE rounds SET state = 'failed', failure = ? WHERE n = ?", why, n);
  }

  finalized(n: number, review: PostedReview): void {
    this.sql.exec("UPDATE rounds SET state = 'finalized', review = ? WHERE n = ?", JSON.stringify(review), n);
  }
}
