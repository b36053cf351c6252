import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import type { Needed } from "../process/debian-packages.js";

/**
 * SQLite for the backup, through Debian's `sqlite3` command rather than a Node binding.
 * better-sqlite3 ships its binaries on GitHub, which a machine that reaches only the npm
 * registry cannot fetch, so every `npm ci` compiled SQLite from source: 70-100 s of each
 * new install and of every CI run (docs/decisions.md, "SQLite for the backup"). The backup
 * needs a consistent copy and a few reads, which one short process each gives.
 */
export const SQLITE_PACKAGE: Needed = { command: "sqlite3", pkg: "sqlite3", purpose: "backups: a consistent copy of a live SQLite store" };

/** How long a statement waits for a writer's lock (workerd's commits) before it fails. */
const BUSY_MS = 10_000;

/** A value a row holds that a statement can write back: what `-json` reads out of these tables. */
type SqlValue = string | number | null;

/** `value` as an SQL literal. Only text, whole numbers and NULL occur in the tables the backup writes. */
function literal(value: unknown): string {
  if (value === null) return "NULL";
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (typeof value === "string") return `'${value.replaceAll("'", "''")}'`;
  throw new Error(`a value the backup cannot write back: ${typeof value}`);
}

/** An SQL identifier, quoted: a column name read from a row. */
function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Runs `sql` on `path` in one `sqlite3` process; its standard output. Read-only opens
 * never create the file (a store that vanished is an error, not an empty new one), and
 * `-bail` stops at the first failing statement.
 */
function run(path: string, sql: string, opts: { readonly?: boolean; json?: boolean } = {}): string {
  const args = ["-bail", "-batch", "-cmd", `.timeout ${BUSY_MS}`];
  if (opts.readonly) args.push("-readonly");
  if (opts.json) args.push("-json");
  // Absolute, so that no name is read as an option (this sqlite3 knows no "--").
  // The statements as an argument rather than on stdin: a store that fails to open ends
  // the process before it would read them.
  args.push(resolve(path), sql);
  const r = spawnSync("sqlite3", args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.error) throw new Error(`sqlite3 could not run (${r.error.message}); it comes with Debian's ${SQLITE_PACKAGE.pkg} package`);
  if (r.status !== 0) throw new Error(`sqlite3 on ${path}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}

/**
 * Copies the store at `src` to `dst` (which must not exist) as of one commit, while
 * workerd keeps writing: `VACUUM INTO` reads the whole store inside one read transaction
 * (WAL mode: the reader never blocks the writer), so the copy cannot mix two commits.
 * The copy keeps the store's journal mode, and passes SQLite's `quick_check`.
 */
export function copyStore(src: string, dst: string): void {
  const mode = run(src, `PRAGMA journal_mode;\nVACUUM INTO ${literal(dst)};\n`, { readonly: true }).trim();
  const check = run(dst, `PRAGMA journal_mode = ${mode === "wal" ? "wal" : "delete"};\nPRAGMA quick_check;\n`).trim().split("\n").slice(1).join("\n");
  // The last connection to close folded the copy's WAL back in: one self-contained file.
  if (check !== "ok") throw new Error(`the copy of ${src} fails its check: ${check}`);
}

/**
 * The rows `sql` selects from the store at `path`, opened read-only; `copy`: a store the
 * backup made, opened read-write so that its closing folds its WAL back in (a read-only
 * connection leaves `-wal` and `-shm` beside a WAL store).
 */
export function select<Row>(path: string, sql: string, opts: { copy?: boolean } = {}): Row[] {
  const out = run(path, `${sql};\n`, { readonly: !opts.copy, json: true }).trim();
  // `-json` prints nothing at all for no rows.
  return out ? (JSON.parse(out) as Row[]) : [];
}

/** Whether the store at `path` (a copy, as for `select`) has a table `name`. */
export function hasTable(path: string, name: string, opts: { copy?: boolean } = {}): boolean {
  return select(path, `SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${literal(name)}`, opts).length > 0;
}

/** Writes `row` into `table` of the store at `path`, replacing the row with its key. */
export function replaceRow(path: string, table: string, row: Record<string, unknown>): void {
  const columns = Object.keys(row);
  run(path, `INSERT OR REPLACE INTO ${identifier(table)} (${columns.map(identifier).join(", ")}) VALUES (${columns.map((c) => literal(row[c])).join(", ")});\n`);
}

/** `SELECT ... WHERE column = value`, with the value as a literal. */
export function whereEquals(column: string, value: SqlValue): string {
  return `${identifier(column)} = ${literal(value)}`;
}
