import type { WakeFilter, WakeItem } from "../../../src/api/subscriptions.js";
import { ok, type Outcome } from "../../../src/api/outcome.js";
import { missing } from "../refusals.js";
import { threadOf } from "../../../src/platform/stubs.js";
import type { PreparedEvent } from "../log/event-log.js";
import type { Accepted, ThreadAccess } from "../thread-access.js";
import type { AlarmPart } from "../../lib/alarm-schedule.js";

export const WATCHERS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS watchers (
    watch      TEXT PRIMARY KEY,
    subscriber TEXT NOT NULL,
    filter     TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS outbox (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    watch      TEXT NOT NULL,
    subscriber TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    excerpt    TEXT NOT NULL,
    depth      INTEGER NOT NULL
  );
`;

interface Watcher {
  watch: string;
  subscriber: string;
  filter: WakeFilter;
}

/** How long a match waits for others before its delivery goes: a burst becomes one wake. */
const COALESCE_MS = 25;
/** How long a delivery the subscriber did not take waits before the next try. */
const RETRY_MS = 5000;
const EXCERPT_CHARS = 300;

/** The start of an event's text, whichever field holds it. */
function excerptOf(body: Record<string, unknown>): string {
  const text = [body.text, body.error, body.output, body.question].find((v): v is string => typeof v === "string") ?? "";
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/**
 * Who watches this Thread (docs/subscriptions.md). An event that matches a watcher's filter
 * goes into the outbox in the commit that writes the event, so no match is lost with the
 * host; the outbox is delivered to each subscriber after the commit, a burst as one
 * delivery, and emptied only once the subscriber took it, so a delivery a crash cut short
 * is made again (the subscriber drops what it saw).
 */
export class Watchers {
  private watchers: Watcher[];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private delivering = false;
  /** When a delivery a subscriber did not take is tried again (memory only: a new instance tries at once). */
  private retryAt: number | null = null;

  /**
   * The outbox is delivered from a timer a moment after its match; the alarm is there for
   * the timer an evicted instance took along (RETRY_MS after the oldest match's event), and
   * for a delivery a subscriber did not take.
   */
  readonly alarm: AlarmPart = {
    name: "wake deliveries",
    nextDueAt: () => {
      if (this.holdDeliveries || this.delivering) return null;
      const oldest = this.thread.sql.exec<{ seq: number }>("SELECT seq FROM outbox ORDER BY id LIMIT 1").toArray()[0];
      if (!oldest) return null;
      return this.retryAt ?? (Date.parse(this.thread.log.get(oldest.seq)?.ts ?? "") || Date.now()) + RETRY_MS;
    },
    runDue: () => this.deliver(),
  };

  constructor(
    private readonly thread: Pick<ThreadAccess, "commits" | "env" | "log" | "reschedule" | "sql" | "state">,
    /** The `wake-deliver` fault drill: deliveries never leave the outbox. */
    private readonly holdDeliveries: boolean,
  ) {
    this.watchers = thread.sql
      .exec<{ watch: string; subscriber: string; filter: string }>("SELECT watch, subscriber, filter FROM watchers")
      .toArray()
      .map((r) => ({ watch: r.watch, subscriber: r.subscriber, filter: JSON.parse(r.filter) as WakeFilter }));
  }

  /** Whether anything waits in the outbox: a new instance delivers it. */
  pending(): boolean {
    return this.thread.sql.exec("SELECT 1 FROM outbox LIMIT 1").toArray().length > 0;
  }

  /** A subscriber asks to watch this thread (missing: this thread does not exist). */
  async watchedBy(watch: string, subscriber: string, filter: WakeFilter): Promise<Outcome<true>> {
    if (!this.thread.state()) return missing();
    await this.add(watch, subscriber, filter);
    return ok(true);
  }

  async unwatchedBy(watch: string): Promise<Outcome<true>> {
    if (!this.thread.state()) return missing();
    await this.remove(watch);
    return ok(true);
  }

  async add(watch: string, subscriber: string, filter: WakeFilter): Promise<void> {
    await this.thread.commits.write(() => {
      this.thread.sql.exec("INSERT OR REPLACE INTO watchers (watch, subscriber, filter) VALUES (?, ?, ?)", watch, subscriber, JSON.stringify(filter));
      this.watchers = [...this.watchers.filter((w) => w.watch !== watch), { watch, subscriber, filter }];
    });
  }

  async remove(watch: string): Promise<void> {
    await this.thread.commits.write(() => {
      this.thread.sql.exec("DELETE FROM watchers WHERE watch = ?", watch);
      this.thread.sql.exec("DELETE FROM outbox WHERE watch = ?", watch);
      this.watchers = this.watchers.filter((w) => w.watch !== watch);
    });
  }

  /**
   * Inside the commit that writes `event`: an outbox row for each watcher it matches.
   * `depth` says how many wakes led to the event (0: none), asked only on a match.
   */
  match(event: Accepted, prepared: PreparedEvent, depth: () => number): boolean {
    if (this.watchers.length === 0) return false;
    let matched = false;
    let body: Record<string, unknown> | null = null;
    for (const w of this.watchers) {
      if (w.filter.kinds && !w.filter.kinds.includes(event.kind)) continue;
      // A body stored apart is matched on kind only: its text is not read back inside the commit.
      if (w.filter.text && (prepared.blob !== null || !prepared.text.includes(w.filter.text))) continue;
      body ??= prepared.blob === null ? (JSON.parse(prepared.text) as Record<string, unknown>) : {};
      this.thread.sql.exec(
        "INSERT INTO outbox (watch, subscriber, seq, kind, excerpt, depth) VALUES (?, ?, ?, ?, ?, ?)",
        w.watch,
        w.subscriber,
        event.seq,
        event.kind,
        excerptOf(body),
        depth() + 1,
      );
      matched = true;
    }
    return matched;
  }

  /** After a commit that matched: delivers soon, so what else the burst matches goes along. */
  schedule(delayMs = COALESCE_MS): void {
    if (this.timer || this.holdDeliveries) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.deliver();
    }, delayMs);
  }

  /** Hands each subscriber its waiting events, one delivery per subscription; what was not taken stays for the retry. */
  async deliver(): Promise<void> {
    if (this.delivering || this.holdDeliveries) return;
    this.delivering = true;
    let retry = false;
    try {
      const rows = this.thread.sql
        .exec<{ id: number; watch: string; subscriber: string; seq: number; kind: string; excerpt: string; depth: number }>("SELECT * FROM outbox ORDER BY id")
        .toArray();
      const byWatch = new Map<string, typeof rows>();
      for (const r of rows) byWatch.set(r.watch, [...(byWatch.get(r.watch) ?? []), r]);
      const source = this.thread.state()!.id;
      for (const [watch, batch] of byWatch) {
        const items: WakeItem[] = batch.map((r) => ({ seq: r.seq, kind: r.kind, excerpt: r.excerpt, depth: r.depth }));
        try {
          const taken = (await threadOf(this.thread.env, batch[0]!.subscriber).wake(watch, source, items)) as Outcome<unknown>;
          // A subscriber that is gone takes nothing, ever: its rows go.
          if (!taken.ok && taken.status !== 404) throw new Error(taken.body.error);
        } catch (err) {
          console.error(`thread ${source}: subscription ${watch} was not delivered (retrying): ${(err as Error).message}`);
          retry = true;
          continue;
        }
        const ids = batch.map((r) => r.id);
        await this.thread.commits.write(() => {
          for (const id of ids) this.thread.sql.exec("DELETE FROM outbox WHERE id = ?", id);
        });
      }
    } finally {
      this.delivering = false;
    }
    this.retryAt = retry ? Date.now() + RETRY_MS : null;
    if (retry) await this.thread.reschedule();
    // Matches made while this delivery ran go next.
    else if (this.pending()) this.schedule();
  }
}
