import { CODES } from "../src/api/errors.js";
import { DurableObject } from "cloudflare:workers";
import type { Estate } from "../src/api/operator.js";
import type { PrCost } from "../src/api/rooms.js";
import { FINISHING_ROLES, type ListThreadsFilter, type ThreadListPage, type ThreadSummary } from "../src/api/threads.js";
import type { Env } from "../src/platform/env.js";
import { decodeListCursor, encodeListCursor } from "../src/shared/cursors.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { ok, refuse, type Outcome } from "../src/api/outcome.js";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS threads (
    id         TEXT PRIMARY KEY,
    n          INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_seq   INTEGER NOT NULL,
    workspace  TEXT,
    parent     TEXT,
    role       TEXT NOT NULL,
    type       TEXT NOT NULL,
    archived   INTEGER NOT NULL,
    seat_lease TEXT,
    summary    TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS threads_recent ON threads (updated_at, n);
  CREATE INDEX IF NOT EXISTS threads_workspace ON threads (workspace, n);
  CREATE INDEX IF NOT EXISTS threads_parent ON threads (parent, n);
`;

/**
 * The host's thread list. Threads push their summaries here; the catalog answers
 * `GET /threads`. Each thread gets a creation number `n` on first sight, and pages are
 * cut by (sort key, n), so threads created while a client pages never shift a page.
 */
export class Catalog extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private nextN: number;
  /** Every busy thread pushes here once a second, and threads that stop together push together: they share commits. */
  private readonly commits: CommitQueue;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.commits = new CommitQueue(ctx.storage);
    this.sql.exec(SCHEMA);
    this.nextN = (this.sql.exec<{ n: number | null }>("SELECT max(n) AS n FROM threads").one().n ?? 0) + 1;
  }

  /** Records a summary; an older one (lower lastSeq) arriving late never overwrites a newer. */
  upsert(s: ThreadSummary): Promise<void> {
    return this.commits.write(() => this.record(s));
  }

  private record(s: ThreadSummary): void {
    const written = this.sql.exec<{ n: number }>(
      `INSERT INTO threads (id, n, created_at, updated_at, last_seq, workspace, parent, role, type, archived, seat_lease, summary)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET
         updated_at = excluded.updated_at, last_seq = excluded.last_seq, workspace = excluded.workspace,
         parent = excluded.parent, role = excluded.role, type = excluded.type, archived = excluded.archived,
         seat_lease = excluded.seat_lease, summary = excluded.summary
       WHERE excluded.last_seq >= threads.last_seq
       RETURNING n`,
      s.id,
      this.nextN,
      s.createdAt,
      s.updatedAt,
      s.lastSeq,
      s.workspace,
      s.parent,
      s.role,
      s.type,
      s.archived ? 1 : 0,
      s.seatLease,
      JSON.stringify(s),
    ).toArray();
    if (written[0]?.n === this.nextN) this.nextN++;
  }

  /** Counts of the host's threads by archive flag, type, role, stage and workspace, and their cost. */
  estate(): Estate {
    const count = (column: string) =>
      Object.fromEntries(
        this.sql
          .exec<{ k: string | null; n: number }>(`SELECT ${column} AS k, count(*) AS n FROM threads WHERE archived = 0 GROUP BY k ORDER BY k`)
          .toArray()
          .map((r) => [r.k ?? "(none)", r.n]),
      );
    const totals = this.sql
      .exec<{ live: number; archived: number; usd: number; input: number; output: number }>(
        `SELECT sum(archived = 0) AS live, sum(archived = 1) AS archived,
                coalesce(sum(json_extract(summary, '$.cost.usd')), 0) AS usd,
                coalesce(sum(json_extract(summary, '$.cost.inputTokens')), 0) AS input,
                coalesce(sum(json_extract(summary, '$.cost.outputTokens')), 0) AS output
         FROM threads`,
      )
      .one();
    return {
      live: totals.live ?? 0,
      archived: totals.archived ?? 0,
      byType: count("type"),
      byRole: count("role"),
      byStage: count("json_extract(summary, '$.stage')"),
      byWorkspace: count("workspace"),
      cost: { usd: totals.usd, inputTokens: totals.input, outputTokens: totals.output },
    };
  }

  /**
   * What the threads that worked on each pull request cost (docs/rooms.md): the threads
   * that name it (a room's reviewer, a build thread) and every thread below them
   * (delegations, forks), archived ones included, each counted once.
   */
  prCosts(): Omit<PrCost, "merged">[] {
    return this.sql
      .exec<{ repo: string; pr: number; workspace: string | null; threads: number; usd: number; input: number; output: number; unpriced: number }>(
        `WITH RECURSIVE work (id, repo, pr) AS (
           SELECT id, json_extract(summary, '$.pr.repo'), json_extract(summary, '$.pr.number') FROM threads WHERE json_extract(summary, '$.pr') IS NOT NULL
           UNION
           SELECT t.id, w.repo, w.pr FROM threads t JOIN work w ON t.parent = w.id WHERE json_extract(t.summary, '$.pr') IS NULL
         )
         SELECT w.repo AS repo, w.pr AS pr, min(t.workspace) AS workspace, count(DISTINCT t.id) AS threads,
                coalesce(sum(json_extract(t.summary, '$.cost.usd')), 0) AS usd,
                coalesce(sum(json_extract(t.summary, '$.cost.inputTokens')), 0) AS input,
                coalesce(sum(json_extract(t.summary, '$.cost.outputTokens')), 0) AS output,
                coalesce(sum(json_extract(t.summary, '$.cost.unpricedCalls')), 0) AS unpriced
         FROM work w JOIN threads t ON t.id = w.id
         GROUP BY w.repo, w.pr ORDER BY w.repo, w.pr`,
      )
      .toArray()
      .map((r) => ({ repo: r.repo, pr: r.pr, workspace: r.workspace ?? "default", threads: r.threads, usd: r.usd, inputTokens: r.input, outputTokens: r.output, unpricedCalls: r.unpriced }));
  }

  /** The live threads of `type` that work on pull request `pr` of `repo`. */
  prThreads(repo: string, pr: number, type: string): string[] {
    return this.sql
      .exec<{ id: string }>(
        "SELECT id FROM threads WHERE archived = 0 AND type = ? AND lower(json_extract(summary, '$.pr.repo')) = lower(?) AND json_extract(summary, '$.pr.number') = ? ORDER BY n",
        type,
        repo,
        pr,
      )
      .toArray()
      .map((r) => r.id);
  }

  /** The live threads that work in worktree `id` (a pull request's thread and its delegations and forks that share it). */
  worktreeSharers(id: string): string[] {
    return this.sql
      .exec<{ id: string }>("SELECT id FROM threads WHERE archived = 0 AND json_extract(summary, '$.pr.worktree') = ? ORDER BY n", id)
      .toArray()
      .map((r) => r.id);
  }

  /** The workspaces live threads belong to (names only: labels on a host without a workspaces file). */
  workspaceNames(): string[] {
    return this.sql
      .exec<{ workspace: string }>("SELECT DISTINCT workspace FROM threads WHERE archived = 0 AND workspace IS NOT NULL")
      .toArray()
      .map((r) => r.workspace);
  }

  /** Live threads at a stage (`degraded`, say), oldest activity first. */
  atStage(stage: string, limit: number): ThreadSummary[] {
    return this.sql
      .exec<{ summary: string }>(
        "SELECT summary FROM threads WHERE archived = 0 AND json_extract(summary, '$.stage') = ? ORDER BY updated_at LIMIT ?",
        stage,
        limit,
      )
      .toArray()
      .map((r) => JSON.parse(r.summary) as ThreadSummary);
  }

  /** The summaries of these threads, as far as the catalog knows them. */
  summaries(ids: string[]): ThreadSummary[] {
    if (ids.length === 0) return [];
    return this.sql
      .exec<{ summary: string }>(`SELECT summary FROM threads WHERE id IN (${ids.map(() => "?").join(",")})`, ...ids)
      .toArray()
      .map((r) => JSON.parse(r.summary) as ThreadSummary);
  }

  list(f: ListThreadsFilter): Outcome<ThreadListPage> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (f.archived === "live") where.push("archived = 0");
    if (f.archived === "archived") where.push("archived = 1");
    if (f.role) (where.push("role = ?"), args.push(f.role));
    if (f.type) (where.push("type = ?"), args.push(f.type));
    if (f.workspace) (where.push("workspace = ?"), args.push(f.workspace));
    if (f.parent) (where.push("parent = ?"), args.push(f.parent));
    if (f.attached !== undefined) where.push(f.attached ? "seat_lease IS NOT NULL" : "seat_lease IS NULL");
    if (f.seats === "open")
      where.push(`NOT (role IN (${FINISHING_ROLES.map(() => "?").join(",")}) AND json_extract(summary, '$.stage') = 'finished')`),
        args.push(...FINISHING_ROLES);

    if (f.after) {
      const cursor = decodeListCursor(f.after);
      if (!cursor || cursor.sort !== f.sort) return refuse(400, `after is not a cursor of a sort=${f.sort} listing`, CODES.invalidQuery);
      if (cursor.sort === "created") (where.push("n < ?"), args.push(cursor.n));
      else (where.push("(updated_at < ? OR (updated_at = ? AND n < ?))"), args.push(cursor.updatedAt, cursor.updatedAt, cursor.n));
    }
    const order = f.sort === "created" ? "n DESC" : "updated_at DESC, n DESC";
    const rows = this.sql
      .exec<{ n: number; updated_at: string; summary: string }>(
        `SELECT n, updated_at, summary FROM threads ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY ${order} LIMIT ?`,
        ...args,
        f.limit + 1,
      )
      .toArray();
    const hasMore = rows.length > f.limit;
    const page = rows.slice(0, f.limit);
    const last = page[page.length - 1];
    const nextAfter =
      last && hasMore
      ? encodeListCursor(f.sort === "created" ? { sort: "created", n: last.n } : { sort: "recent", updatedAt: last.updated_at, n: last.n })
      : null;
    return ok({ threads: page.map((r) => JSON.parse(r.summary) as ThreadSummary), nextAfter, hasMore });
  }
}
