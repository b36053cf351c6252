import { CODES } from "../../../src/api/errors.js";
import type { Json } from "../../../src/api/engine.js";
import type { OperationAccepted, OperationDetail, OperationKind, OperationOutcome, OperationSummary, ReportOperation } from "../../../src/api/operations.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { newId } from "../../../src/shared/ids.js";
import { digestOf, IdempotencyKeys } from "../log/idempotency.js";
import type { PreparedEvent } from "../log/event-log.js";
import { archivedRefusal, missing, runsTurns } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";

export const OPERATIONS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS operations (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL,
    child       TEXT,
    detail      TEXT,
    started_seq INTEGER NOT NULL,
    started_at  TEXT NOT NULL,
    settled_seq INTEGER,
    settled_at  TEXT,
    outcome     TEXT
  );
  CREATE TABLE IF NOT EXISTS milestones (
    seq       INTEGER PRIMARY KEY,
    operation TEXT NOT NULL,
    ts        TEXT NOT NULL,
    text      TEXT NOT NULL,
    data      TEXT
  );
  CREATE INDEX IF NOT EXISTS milestones_operation ON milestones (operation, seq);
`;

type OperationRow = {
  id: string;
  kind: OperationKind;
  title: string;
  child: string | null;
  detail: string | null;
  started_seq: number;
  started_at: string;
  settled_seq: number | null;
  settled_at: string | null;
  outcome: string | null;
};

/**
 * Where an operation's Idempotency-Keys live in the thread's idempotency table, apart from
 * messages' keys and from each other: a header cannot hold the NUL that separates them.
 */
const startKey = (key: string) => `\u0000operation-start\u0000${key}`;
const reportKey = (operation: string, key: string) => `\u0000operation-report\u0000${operation}\u0000${key}`;

/** A wake names the operation it comes from: `from` on the message the parent receives. */
export const wakeSender = (operation: string) => `operation:${operation}`;

/** The text of the message that wakes a delegating thread with its child's result. */
function wakeText(row: OperationRow, outcome: OperationOutcome): string {
  const what = outcome.status === "completed" ? "finished" : outcome.status;
  const result = outcome.result === undefined ? "" : typeof outcome.result === "string" ? outcome.result : JSON.stringify(outcome.result);
  const lines = [`[delegation ${row.id} "${row.title}" ${what}${row.child ? `: thread ${row.child}` : ""}]`];
  if (outcome.error) lines.push(`error: ${outcome.error}`);
  if (result) lines.push(result);
  return lines.join("\n");
}

/**
 * The operations of one Thread (docs/operations.md): started, given milestones, and
 * settled by exactly one outcome, each an event written in the same commit as its row,
 * so a second outcome is refused however many arrive at once. A delegation's outcome also
 * wakes this thread with a message, in that commit.
 */
export class Operations {
  private readonly keys: IdempotencyKeys;

  constructor(
    private readonly thread: Pick<ThreadAccess, "append" | "commits" | "prepareOrRefuse" | "sql" | "state" | "tables">,
    /** Starts the turn a delegation's outcome woke. */
    private readonly kick: () => void,
  ) {
    this.keys = new IdempotencyKeys(thread.sql);
  }

  private get sql(): SqlStorage {
    return this.thread.sql;
  }

  private row(id: string): OperationRow | null {
    return this.sql.exec<OperationRow>("SELECT * FROM operations WHERE id = ?", id).toArray()[0] ?? null;
  }

  private summary(r: OperationRow): OperationSummary {
    const outcome = r.outcome ? (JSON.parse(r.outcome) as OperationSummary["outcome"]) : null;
    const milestones = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM milestones WHERE operation = ?", r.id).one().n;
    return {
      operation: r.id,
      kind: r.kind,
      title: r.title,
      state: outcome ? outcome.status : "open",
      child: r.child,
      detail: r.detail ? (JSON.parse(r.detail) as Record<string, Json>) : null,
      startedSeq: r.started_seq,
      settledSeq: r.settled_seq,
      outcome,
      milestones,
      startedAt: r.started_at,
      settledAt: r.settled_at,
    };
  }

  list(): Outcome<{ operations: OperationSummary[] }> {
    if (!this.thread.state()) return missing();
    return ok({ operations: this.sql.exec<OperationRow>("SELECT * FROM operations ORDER BY started_seq").toArray().map((r) => this.summary(r)) });
  }

  get(id: string): Outcome<OperationDetail> {
    if (!this.thread.state()) return missing();
    const r = this.row(id);
    if (!r) return notFound(id);
    const milestones = this.sql
      .exec<{ seq: number; ts: string; text: string; data: string | null }>("SELECT seq, ts, text, data FROM milestones WHERE operation = ? ORDER BY seq", id)
      .toArray()
      .map((m) => ({ seq: m.seq, ts: m.ts, text: m.text, ...(m.data !== null ? { data: JSON.parse(m.data) as Json } : {}) }));
    return ok({ ...this.summary(r), milestones });
  }

  /** Whether a delegation of this thread waits for its child: a cut of the context waits with it (WindowBlocked). */
  delegationOpen(): boolean {
    return this.sql.exec("SELECT 1 FROM operations WHERE kind = 'delegation' AND outcome IS NULL LIMIT 1").toArray().length > 0;
  }

  /** The answer an Idempotency-Key already got here, if any; a conflict when the key was used for another request. */
  async replay(key: string | undefined, request: unknown): Promise<Outcome<OperationAccepted> | null> {
    if (!key) return null;
    return this.replayed(startKey(key), await digestOf(request));
  }

  private replayed(key: string, digest: string): Outcome<OperationAccepted> | null {
    const found = this.keys.seen(key, digest, "request");
    if (!found?.ok) return found;
    const seen = found.value;
    // By the event's seq, not its body: a large body is stored apart and not in the log's row.
    const operation =
      this.sql.exec<{ id: string }>("SELECT id FROM operations WHERE started_seq = ? OR settled_seq = ?", seen.seq, seen.seq).toArray()[0]?.id ??
      this.sql.exec<{ operation: string }>("SELECT operation FROM milestones WHERE seq = ?", seen.seq).toArray()[0]?.operation;
    const r = operation ? this.row(operation) : null;
    if (!r) return refuse(409, "this Idempotency-Key's request left no operation", CODES.idempotencyConflict, { seq: seen.seq });
    const s = this.summary(r);
    return ok({ operation: r.id, seq: seen.seq, ts: seen.ts, state: s.state, ...(r.child ? { child: r.child } : {}), replayed: true });
  }

  /** Starts an operation (a delegation's child already exists, with `operation` as its id). */
  async start(
    body: { operation?: string; kind: OperationKind; title: string; child?: string; prompt?: string; detail?: Record<string, Json> },
    idempotency?: { key: string; request: unknown },
  ): Promise<Outcome<OperationAccepted>> {
    const s = this.thread.state();
    if (!s) return missing();
    if (s.archivedAt) return archivedRefusal(s);
    const operation = body.operation ?? newId("op_");
    const started = { operation, kind: body.kind, title: body.title, ...(body.child ? { child: body.child } : {}), ...(body.prompt ? { prompt: body.prompt } : {}), ...(body.detail ? { detail: body.detail } : {}) };
    const prepared = await this.thread.prepareOrRefuse("operation-started", started);
    if (!prepared.ok) return prepared;
    const key = idempotency ? startKey(idempotency.key) : null;
    const digest = idempotency ? await digestOf(idempotency.request) : null;
    return this.thread.commits.write((): Outcome<OperationAccepted> => {
      const seen = key ? this.replayed(key, digest!) : null;
      if (seen) return seen;
      if (this.row(operation)) return refuse(409, `operation ${operation} exists`, CODES.operationSettled);
      const e = this.thread.append(prepared.value);
      this.sql.exec(
        "INSERT INTO operations (id, kind, title, child, detail, started_seq, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        operation,
        body.kind,
        body.title,
        body.child ?? null,
        body.detail ? JSON.stringify(body.detail) : null,
        e.seq,
        e.ts,
      );
      if (key) this.keys.remember(key, digest!, e.seq, e.ts);
      return ok({ operation, seq: e.seq, ts: e.ts, state: "open", ...(body.child ? { child: body.child } : {}) });
    });
  }

  /**
   * A milestone, or the outcome: decided inside the commit, so of any number of outcomes
   * arriving together exactly one settles the operation and the others meet
   * `operation-settled`. A delegation's outcome wakes this thread with the result.
   */
  async report(id: string, report: ReportOperation, by: "caller" | "child", idempotencyKey?: string): Promise<Outcome<OperationAccepted>> {
    const outcome = await this.write(id, report, by, idempotencyKey);
    // A delegation's outcome queued the wake that starts a turn here.
    if (outcome.ok) this.kick();
    return outcome;
  }

  private async write(id: string, report: ReportOperation, by: "caller" | "child", idempotencyKey?: string): Promise<Outcome<OperationAccepted>> {
    const s = this.thread.state();
    if (!s) return missing();
    const early = this.row(id);
    if (!early) return notFound(id);
    const key = idempotencyKey ? reportKey(id, idempotencyKey) : null;
    const digest = key ? await digestOf(report) : null;
    let prepared: PreparedEvent;
    let wake: { event: PreparedEvent; text: string } | null = null;
    if ("milestone" in report) {
      const p = await this.thread.prepareOrRefuse("operation-milestone", { operation: id, text: report.milestone.text, ...(report.milestone.data !== undefined ? { data: report.milestone.data as Json } : {}) });
      if (!p.ok) return p;
      prepared = p.value;
    } else {
      const p = await this.thread.prepareOrRefuse("operation-settled", { operation: id, ...report.outcome, by });
      if (!p.ok) return p;
      prepared = p.value;
      if (early.kind === "delegation") {
        const text = wakeText(early, report.outcome);
        const w = await this.thread.prepareOrRefuse("message", { text, from: wakeSender(id) });
        if (!w.ok) return w;
        wake = { event: w.value, text };
      }
    }
    const outcome = await this.thread.commits.write((): Outcome<OperationAccepted> => {
      const seen = key ? this.replayed(key, digest!) : null;
      if (seen) return seen;
      const r = this.row(id)!;
      if (r.outcome !== null) {
        const settled = JSON.parse(r.outcome) as OperationOutcome;
        return refuse(409, `operation ${id} is ${settled.status} already (event ${r.settled_seq})`, CODES.operationSettled, { state: settled.status, settledSeq: r.settled_seq });
      }
      const e = this.thread.append(prepared);
      if ("milestone" in report) {
        const data = report.milestone.data;
        this.sql.exec("INSERT INTO milestones (seq, operation, ts, text, data) VALUES (?, ?, ?, ?, ?)", e.seq, id, e.ts, report.milestone.text, data === undefined ? null : JSON.stringify(data));
      } else {
        this.sql.exec("UPDATE operations SET outcome = ?, settled_seq = ?, settled_at = ? WHERE id = ?", JSON.stringify({ ...report.outcome, by }), e.seq, e.ts, id);
        if (wake) {
          const w = this.thread.append(wake.event);
          const now = this.thread.state()!;
          // The wake is the record either way; a retired thread or one that runs no turns takes no turn for it.
          if (runsTurns(now) && !now.archivedAt) this.thread.tables.queue(w.seq, wake.text, wakeSender(id));
        }
      }
      if (key) this.keys.remember(key, digest!, e.seq, e.ts);
      const after = this.summary(this.row(id)!);
      return ok({ operation: id, seq: e.seq, ts: e.ts, state: after.state, ...(r.child ? { child: r.child } : {}) });
    });
    return outcome;
  }
}

function notFound(id: string): Outcome<never> {
  return refuse(404, `thread has no operation ${id}`, CODES.operationNotFound);
}
