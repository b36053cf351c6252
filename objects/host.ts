import { DurableObject } from "cloudflare:workers";
import type { Incident } from "../src/api/turns.js";
import type { Env } from "../src/platform/env.js";
import type { HostReport, HostSample, KeeperThresholds, SpawnPause } from "../src/api/operator.js";
import { Keeper } from "./host/keeper.js";
import { AttentionBoard } from "./host/attention-board.js";
import { Registry } from "./host/registry.js";
import type { AttentionItem } from "../src/api/operator.js";
import type { DrainStatus } from "../src/api/drain.js";
import { Drain, type ArmedDrain } from "./host/drain.js";
import { ok, type Outcome } from "../src/api/outcome.js";
import type { StorageState } from "../src/api/operator.js";
import { HostStorageFull, StorageWatch } from "./host/storage-watch.js";

const INCIDENT_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Failures held while the volume is full, at most: beyond that the incident already says enough. */
const HELD_FAILURES = 1000;

/**
 * Host-wide state that belongs to no thread: which threads are mid-turn (so a restart
 * can find the turns it lost), the incident window and the drain.
 *
 * The spec keeps incidents and the drain in memory and resets them on restart. They are
 * kept in this object's storage tagged with the front's boot id instead: an idle object
 * may be evicted and rebuilt at any time, which must not empty the window or disarm the
 * drain, while a new boot id (a restart) still starts afresh.
 */
export class Host extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly boot: string;
  private readonly keeper: Keeper;
  private readonly attention: AttentionBoard;
  private readonly registry: Registry;
  private readonly drain: Drain;
  private readonly storage: StorageWatch;
  /** Turns started (their time) or ended (null) while the volume was full, not yet in the `running` table. */
  private readonly heldRunning = new Map<string, number | null>();
  /** Failed turns recorded while the volume was full, not yet in the `failures` table. */
  private readonly heldFailures: { threadId: string; cls: Incident["class"]; message: string; at: number }[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.boot = env.SERVICE_BOOT_ID || "dev";
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS running (thread_id TEXT PRIMARY KEY, since INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS failures (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        boot TEXT NOT NULL,
        at INTEGER NOT NULL,
        thread_id TEXT NOT NULL,
        class TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        message TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS failures_at ON failures (at);
    `);
    this.sql.exec("DELETE FROM failures WHERE boot != ? OR at < ?", this.boot, Date.now() - INCIDENT_WINDOW_MS);
    this.keeper = new Keeper(this.sql);
    this.attention = new AttentionBoard(this.sql);
    this.registry = new Registry(this.sql);
    this.drain = new Drain(this.sql, this.boot);
    this.storage = new StorageWatch(
      (write) => ctx.storage.transactionSync(write),
      (threadId, message, at) => this.recordFailure(threadId, "storage-full", message, at),
    );
  }

  /**
   * An operator's write while the volume is full is refused (507, as every write then): a
   * commit the volume refuses would reset this object and forget the fault (`StorageWatch`).
   */
  private mustWrite(): void {
    const s = this.storage.state();
    if (s.state === "full") throw new HostStorageFull(s.reason);
  }

  // ---- the data volume: full since a write was refused for want of space, until one succeeds ----

  storageState(): StorageState {
    return this.storage.state();
  }

  storageRefused(reason: string, threadId: string | null, at: number): void {
    this.storage.refused(reason, threadId, at);
  }

  storageWritten(at: number): void {
    this.storage.written(at);
    if (!this.storage.full) this.writeHeld();
  }

  /** What the index and the incident window were told while the volume was full, written now that it takes writes. */
  private writeHeld(): void {
    if (this.heldRunning.size === 0 && this.heldFailures.length === 0) return;
    // Kept until written: a volume still too full for these rows leaves them held for the next success.
    this.ctx.storage.transactionSync(() => {
      for (const [threadId, since] of this.heldRunning)
        if (since === null) this.sql.exec("DELETE FROM running WHERE thread_id = ?", threadId);
        else this.sql.exec("INSERT OR REPLACE INTO running (thread_id, since) VALUES (?, ?)", threadId, since);
      for (const f of this.heldFailures) this.recordFailure(f.threadId, f.cls, f.message, f.at);
    });
    this.heldRunning.clear();
    this.heldFailures.length = 0;
  }

  // ---- the drain (SPEC "States": Drain) ----

  drainStatus(): DrainStatus {
    return this.statusOf(this.drain.current());
  }

  armDrain(owner: string | null, reason: string | null): Outcome<DrainStatus> {
    this.mustWrite();
    return this.withStatus(this.drain.arm(owner, reason));
  }

  disarmDrain(): Outcome<DrainStatus> {
    this.mustWrite();
    return this.withStatus(this.drain.disarm());
  }

  releaseDrain(owner: string): Outcome<DrainStatus> {
    this.mustWrite();
    return this.withStatus(this.drain.release(owner));
  }

  private withStatus(outcome: Outcome<ArmedDrain | null>): Outcome<DrainStatus> {
    return outcome.ok ? ok(this.statusOf(outcome.value)) : outcome;
  }

  private statusOf(armed: ArmedDrain | null): DrainStatus {
    const active = this.runningTurns();
    return {
      armed: armed !== null,
      activeThreads: active.length,
      active,
      owner: armed?.owner ?? null,
      since: armed ? new Date(armed.since).toISOString() : null,
      reason: armed?.reason ?? null,
    };
  }

  // ---- operator records: external peers and previews (values are JSON text) ----

  addRecord(kind: "peer" | "preview", key: string, valueJson: string): boolean {
    this.mustWrite();
    return this.registry.add(kind, key, JSON.parse(valueJson));
  }

  removeRecord(kind: "peer" | "preview", key: string): boolean {
    this.mustWrite();
    return this.registry.remove(kind, key);
  }

  records(kind: "peer" | "preview"): string {
    return this.registry.list(kind);
  }

  record(kind: "peer" | "preview", key: string): string | null {
    return this.registry.get(kind, key);
  }

  // ---- memory alerts: a workspace's last retain that could not be stored, until one is ----

  /** Opens or replaces the workspace's alert, keeping when it opened; null closes it. */
  setMemoryAlert(workspace: string, alertJson: string | null): void {
    // Bookkeeping after a retain that was stored (or not): skipped while the volume is full, not refused.
    if (this.storage.full) return;
    const open = this.registry.get("memory-alert", workspace);
    this.registry.remove("memory-alert", workspace);
    if (alertJson === null) return;
    const alert = JSON.parse(alertJson) as { since: string };
    this.registry.add("memory-alert", workspace, { ...alert, since: open ? (JSON.parse(open) as { since: string }).since : alert.since });
  }

  /** The open alerts as JSON text (`MemoryAlert[]`), the one open longest first. */
  memoryAlerts(): string {
    const alerts = JSON.parse(this.registry.list("memory-alert")) as { since: string }[];
    return JSON.stringify(alerts.sort((a, b) => a.since.localeCompare(b.since)));
  }

  // ---- attention items ----

  /**
   * Records what opened and closed since the last look at the items (`AttentionItem[]` as
   * JSON: item details are any JSON, which RPC types cannot express); answers the newest seq.
   */
  refreshAttention(itemsJson: string, lookedAt: number, unknown: string[]): number {
    // On a full volume the items are still answered; their changes are logged at the first look after space returns.
    if (this.storage.full) return this.attention.lastSeq();
    return this.attention.refresh(JSON.parse(itemsJson) as AttentionItem[], lookedAt, unknown);
  }

  /** `AttentionChange[]` as JSON text. */
  attentionChanges(after: number, limit: number): string {
    return JSON.stringify(this.attention.changes(after, limit));
  }

  // ---- the disk keeper and the machine's measurements ----

  hostReport(report: HostReport, thresholds: KeeperThresholds): SpawnPause {
    // A sample skipped while the volume is full: the front reports again in a few seconds.
    if (this.storage.full) return this.keeper.view();
    return this.keeper.report(report, thresholds, this.runningTurns().length);
  }

  spawnPause(): SpawnPause {
    return this.keeper.view();
  }

  /** What the spawn gate needs, in one call: the pause, and the threads mid-turn. */
  spawnGate(): { pause: SpawnPause; running: string[] } {
    return { pause: this.keeper.view(), running: this.runningTurns() };
  }

  clearSpawnPause(reason: string): SpawnPause {
    this.mustWrite();
    return this.keeper.clear(reason);
  }

  lastHostReport(): HostReport | null {
    return this.keeper.last();
  }

  hostSamples(since: number): HostSample[] {
    return this.keeper.samples(since);
  }

  // While the volume is full the Host writes nothing (StorageWatch): what the index and the
  // incident window are told then is held in memory, shown as if written (the drain and the
  // keeper read it), and written once the volume takes writes again.
  turnStarted(threadId: string): void {
    if (this.storage.full) return void this.heldRunning.set(threadId, Date.now());
    this.sql.exec("INSERT OR REPLACE INTO running (thread_id, since) VALUES (?, ?)", threadId, Date.now());
  }

  turnEnded(threadId: string): void {
    if (this.storage.full) return void this.heldRunning.set(threadId, null);
    this.sql.exec("DELETE FROM running WHERE thread_id = ?", threadId);
  }

  /** Threads that were mid-turn as far as this index knows; each thread decides for itself. */
  runningTurns(): string[] {
    const rows = this.sql.exec<{ thread_id: string; since: number }>("SELECT thread_id, since FROM running").toArray();
    const since = new Map(rows.map((r) => [r.thread_id, r.since]));
    for (const [threadId, at] of this.heldRunning)
      if (at === null) since.delete(threadId);
      else since.set(threadId, since.get(threadId) ?? at);
    return [...since].sort((a, b) => a[1] - b[1]).map(([threadId]) => threadId);
  }

  recordFailure(threadId: string, cls: Incident["class"], message: string, at = Date.now()): void {
    if (this.storage.full) {
      if (this.heldFailures.length < HELD_FAILURES) this.heldFailures.push({ threadId, cls, message, at });
      return;
    }
    this.sql.exec(
      "INSERT INTO failures (boot, at, thread_id, class, fingerprint, message) VALUES (?, ?, ?, ?, ?, ?)",
      this.boot,
      at,
      threadId,
      cls,
      fingerprint(message),
      message.slice(0, 2000),
    );
  }

  /** Failed turns since `since` (and within the last 24 h), grouped by class and fingerprint, busiest first. */
  incidents(since: number): Incident[] {
    const from = Math.max(since, Date.now() - INCIDENT_WINDOW_MS);
    // Bookkeeping waits while the volume is full (StorageWatch); the query below keeps to the window anyway.
    if (!this.storage.full) this.sql.exec("DELETE FROM failures WHERE at < ?", Date.now() - INCIDENT_WINDOW_MS);
    const rows = this.sql
      .exec<{ class: Incident["class"]; fingerprint: string; message: string; thread_id: string; at: number }>(
        "SELECT class, fingerprint, message, thread_id, at FROM failures WHERE boot = ? AND at >= ? ORDER BY at",
        this.boot,
        from,
      )
      .toArray();
    const groups = new Map<string, Incident & { ids: Set<string> }>();
    for (const r of rows) {
      const key = `${r.class}\n${r.fingerprint}`;
      let g = groups.get(key);
      if (!g) {
        g = { class: r.class, fingerprint: r.fingerprint, message: r.message, failures: 0, threads: 0, threadIds: [], firstAt: "", lastAt: "", ids: new Set() };
        g.firstAt = new Date(r.at).toISOString();
        groups.set(key, g);
      }
      g.failures++;
      if (r.thread_id) g.ids.add(r.thread_id);
      g.message = r.message;
      g.lastAt = new Date(r.at).toISOString();
    }
    // A full volume is an incident while it lasts; it joins the rows once the disk takes them.
    const storage = this.storage.state();
    const open: Incident[] =
      storage.state === "full" && Date.parse(storage.lastAt) >= from
        ? [
            {
              class: "storage-full",
              fingerprint: fingerprint(storage.reason),
              message: storage.reason,
              failures: storage.refusals,
              threads: storage.threadIds.length,
              threadIds: storage.threadIds,
              firstAt: storage.since,
              lastAt: storage.lastAt,
            },
          ]
        : [];
    return [...groups.values()]
      .map(({ ids, ...g }): Incident => ({ ...g, threads: ids.size, threadIds: [...ids].slice(0, 50) }))
      .concat(open)
      .sort((a, b) => b.failures - a.failures || b.lastAt.localeCompare(a.lastAt));
  }
}

/**
 * The shape of an error text without the parts that differ between occurrences
 * (ids, numbers, quoted values), so the same fault on many threads is one incident.
 */
export function fingerprint(message: string): string {
  return message
    .toLowerCase()
    .replace(/\b(thr|turn|call|toolu|appr|req|resp|msg)_[a-z0-9]+/g, "<id>")
    .replace(/`[^`]*`|"[^"]*"|'[^']*'/g, "<v>")
    .replace(/\b[0-9a-f]{8,}\b/g, "<hex>")
    .replace(/\d+(\.\d+)?/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 160);
}
