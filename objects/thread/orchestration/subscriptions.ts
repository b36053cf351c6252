import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { MAX_WAKE_DEPTH, type Subscription, type WakeFilter, type WakeItem, type WatchTarget } from "../../../src/api/subscriptions.js";
import { newId } from "../../../src/shared/ids.js";
import { archivedRefusal, missing, runsTurns } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import { seatNamed } from "../thread-state.js";

export const SUBSCRIPTIONS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS subscriptions (
    watch       TEXT PRIMARY KEY,
    target      TEXT NOT NULL,
    filter      TEXT NOT NULL,
    note        TEXT,
    deliver     TEXT,
    created_seq INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    wakes       INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS wakes_seen (
    watch  TEXT NOT NULL,
    source TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (watch, source, seq)
  );
`;

type SubscriptionRow = { watch: string; target: string; filter: string; note: string | null; deliver: string | null; created_seq: number; created_at: string; wakes: number };

const toSubscription = (r: SubscriptionRow): Subscription => ({
  watch: r.watch,
  target: JSON.parse(r.target) as WatchTarget,
  filter: JSON.parse(r.filter) as WakeFilter,
  note: r.note,
  deliver: r.deliver ? (JSON.parse(r.deliver) as { seat: string }) : null,
  createdSeq: r.created_seq,
  createdAt: r.created_at,
  wakes: r.wakes,
});

/** A wake message's sender: the subscription it comes from. */
export const watchSender = (watch: string) => `watch:${watch}`;

/** Events a wake lists line by line; a larger burst is counted, so one wake stays a small message. */
const LISTED = 20;

/** The wake's text: the note, then one line per matching event (the event, the start of its text). */
function wakeText(sub: Subscription, source: string, items: WakeItem[]): string {
  const head = `[subscription ${sub.watch}${sub.note ? `: ${sub.note}` : ""}] ${items.length} event${items.length === 1 ? "" : "s"} on thread ${source}`;
  const lines = items.slice(0, LISTED).map((i) => `- ${i.kind} #${i.seq}${i.excerpt ? `: ${i.excerpt}` : ""}`);
  if (items.length > LISTED) lines.push(`- and ${items.length - LISTED} more (GET /threads/${source}/tail)`);
  return [head, ...lines].join("\n");
}

/**
 * What this Thread watches (docs/subscriptions.md): its subscriptions, and the wakes the
 * watched threads hand it. A wake is taken once per matching event, whatever the number
 * of deliveries, and one delivery's events make one message.
 *
 * `wakes_seen` keeps one row per subscription and watched thread: the highest seq taken.
 * A watched thread hands its outbox over in seq order, each delivery carrying every match
 * not yet taken, so an event at or below that mark was in a delivery already taken. The
 * rows go with their subscription.
 */
export class Subscriptions {
  constructor(
    private readonly thread: Pick<ThreadAccess, "append" | "commits" | "prepareOrRefuse" | "sql" | "state" | "tables">,
    private readonly kick: () => void,
  ) {}

  private get sql(): SqlStorage {
    return this.thread.sql;
  }

  private row(watch: string): Subscription | null {
    const r = this.sql.exec<SubscriptionRow>("SELECT * FROM subscriptions WHERE watch = ?", watch).toArray()[0];
    return r ? toSubscription(r) : null;
  }

  list(): Outcome<{ subscriptions: Subscription[] }> {
    if (!this.thread.state()) return missing();
    return ok({ subscriptions: this.sql.exec<SubscriptionRow>("SELECT * FROM subscriptions ORDER BY created_seq").toArray().map(toSubscription) });
  }

  async add(target: WatchTarget, filter: WakeFilter, note: string | null, deliver: { seat: string } | null): Promise<Outcome<Subscription>> {
    const s = this.thread.state();
    if (!s) return missing();
    if (s.archivedAt) return archivedRefusal(s);
    if (deliver && seatNamed(s, deliver.seat)?.state !== "active") return refuse(404, `thread ${s.id} has no active seat ${deliver.seat} to deliver to`, CODES.seatNotFound);
    const watch = newId("watch_");
    const prepared = await this.thread.prepareOrRefuse("subscription-added", { watch, target, filter, note, deliver });
    if (!prepared.ok) return prepared;
    return this.thread.commits.write((): Outcome<Subscription> => {
      const e = this.thread.append(prepared.value);
      this.sql.exec(
        "INSERT INTO subscriptions (watch, target, filter, note, deliver, created_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        watch,
        JSON.stringify(target),
        JSON.stringify(filter),
        note,
        deliver ? JSON.stringify(deliver) : null,
        e.seq,
        e.ts,
      );
      return ok(this.row(watch)!);
    });
  }

  async remove(watch: string): Promise<Outcome<Subscription>> {
    if (!this.thread.state()) return missing();
    const found = this.row(watch);
    if (!found) return refuse(404, `thread has no subscription ${watch}`, CODES.subscriptionNotFound);
    const prepared = await this.thread.prepareOrRefuse("subscription-removed", { watch });
    if (!prepared.ok) return prepared;
    return this.thread.commits.write((): Outcome<Subscription> => {
      const now = this.row(watch);
      if (!now) return refuse(404, `thread has no subscription ${watch}`, CODES.subscriptionNotFound);
      this.thread.append(prepared.value);
      this.sql.exec("DELETE FROM subscriptions WHERE watch = ?", watch);
      this.sql.exec("DELETE FROM wakes_seen WHERE watch = ?", watch);
      return ok(now);
    });
  }

  /** The events of a delivery this thread has not taken yet. */
  private unseen(watch: string, source: string, items: WakeItem[]): WakeItem[] {
    const mark = this.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM wakes_seen WHERE watch = ? AND source = ?", watch, source).one().seq ?? 0;
    return items.filter((i) => i.seq > mark);
  }

  /**
   * A watched thread's matching events. Taken in one commit with the wake message, so a
   * delivery repeated after a crash finds its events seen and writes nothing. A removed
   * subscription takes them and drops them; a chain of wakes past `MAX_WAKE_DEPTH` is cut
   * with a system line instead of a message that would start a turn.
   *
   * The message is prepared for the events not seen yet, and written only if the commit
   * finds the same ones unseen: a body over the blob threshold is stored apart before the
   * commit, so rewriting its text inside it would leave the log's blob saying what
   * followers were not shown. A delivery taken meanwhile means preparing again.
   */
  async wake(watch: string, source: string, items: WakeItem[]): Promise<Outcome<{ taken: number }>> {
    const s = this.thread.state();
    if (!s) return missing();
    for (;;) {
      const sub = this.row(watch);
      const fresh = sub ? this.unseen(watch, source, items) : [];
      if (!sub || fresh.length === 0) return ok({ taken: 0 });
      const seqs = fresh.map((i) => i.seq);
      const depth = Math.max(...fresh.map((i) => i.depth));
      const cut = depth > MAX_WAKE_DEPTH;
      const text = wakeText(sub, source, fresh);
      const prepared = cut
        ? await this.thread.prepareOrRefuse("system", {
            level: "error",
            text: `wake chain cut: subscription ${watch} would wake this thread at depth ${depth} (more than ${MAX_WAKE_DEPTH} wakes in a row), from thread ${source}`,
          })
        : await this.thread.prepareOrRefuse("message", {
            text,
            from: watchSender(watch),
            ...(sub.deliver ? { seat: sub.deliver.seat } : {}),
            wake: { watch, source, seqs, depth },
          });
      if (!prepared.ok) return prepared;
      const taken = await this.thread.commits.write((): number | null => {
        if (!this.row(watch)) return 0;
        const now = this.unseen(watch, source, items).map((i) => i.seq);
        if (now.length === 0) return 0;
        if (now.join() !== seqs.join()) return null;
        const mark = Math.max(...seqs);
        this.sql.exec("INSERT OR IGNORE INTO wakes_seen (watch, source, seq) VALUES (?, ?, ?)", watch, source, mark);
        this.sql.exec("DELETE FROM wakes_seen WHERE watch = ? AND source = ? AND seq < ?", watch, source, mark);
        const e = this.thread.append(prepared.value);
        if (cut) return fresh.length;
        this.sql.exec("UPDATE subscriptions SET wakes = wakes + 1 WHERE watch = ?", watch);
        const state = this.thread.state()!;
        const seat = sub.deliver && seatNamed(state, sub.deliver.seat)?.state === "active" ? sub.deliver.seat : undefined;
        if (runsTurns(state) && !state.archivedAt) this.thread.tables.queue(e.seq, text, watchSender(watch), seat);
        return fresh.length;
      });
      if (taken === null) continue;
      if (taken > 0 && !cut) this.kick();
      return ok({ taken });
    }
  }
}
