import { CODES } from "../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import { MAX_WAKE_DEPTH, type Subscription, type WakeFilter, type WakeItem, type WatchTarget } from "../../src/api/subscriptions.js";
import { newId } from "../../src/shared/ids.js";
import { archivedRefusal, missing, runsTurns } from "./refusals.js";
import type { ThreadAccess } from "./thread-access.js";
import { seatNamed } from "./thread-state.js";

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
 * of deliveries (`wakes_seen`), and one delivery's events make one message.
 */
export class Subscriptions {
  constructor(
    private readonly thread: ThreadAccess,
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
      return ok(now);
    });
  }

  /**
   * A watched thread's matching events. Taken in one commit with the wake message, so a
   * delivery repeated after a crash finds its events seen and writes nothing. A removed
   * subscription takes them and drops them; a chain of wakes past `MAX_WAKE_DEPTH` is cut
   * with a system line instead of a message that would start a turn.
   */
  async wake(watch: string, source: string, items: WakeItem[]): Promise<Outcome<{ taken: number }>> {
    const s = this.thread.state();
    if (!s) return missing();
    const sub = this.row(watch);
    if (!sub || items.length === 0) return ok({ taken: 0 });
    const depth = Math.max(...items.map((i) => i.depth));
    const cut = depth > MAX_WAKE_DEPTH;
    const text = wakeText(sub, source, items);
    const message = await this.thread.prepareOrRefuse("message", {
      text,
      from: watchSender(watch),
      ...(sub.deliver ? { seat: sub.deliver.seat } : {}),
      wake: { watch, source, seqs: items.map((i) => i.seq), depth },
    });
    if (!message.ok) return message;
    const line = await this.thread.prepareOrRefuse("system", {
      level: "error",
      text: `wake chain cut: subscription ${watch} would wake this thread at depth ${depth} (more than ${MAX_WAKE_DEPTH} wakes in a row), from thread ${source}`,
    });
    if (!line.ok) return line;
    const taken = await this.thread.commits.write((): number => {
      if (!this.row(watch)) return 0;
      const fresh = items.filter((i) => this.sql.exec("SELECT 1 FROM wakes_seen WHERE watch = ? AND source = ? AND seq = ?", watch, source, i.seq).toArray().length === 0);
      if (fresh.length === 0) return 0;
      for (const i of fresh) this.sql.exec("INSERT INTO wakes_seen (watch, source, seq) VALUES (?, ?, ?)", watch, source, i.seq);
      if (cut) {
        this.thread.append(line.value);
        return fresh.length;
      }
      // Written whole for the events not seen before (a repeated delivery may carry some that were).
      const body = { text: wakeText(sub, source, fresh), from: watchSender(watch), ...(sub.deliver ? { seat: sub.deliver.seat } : {}), wake: { watch, source, seqs: fresh.map((i) => i.seq), depth } };
      const e = this.thread.append(fresh.length === items.length ? message.value : { ...message.value, text: JSON.stringify(body) });
      this.sql.exec("UPDATE subscriptions SET wakes = wakes + 1 WHERE watch = ?", watch);
      const now = this.thread.state()!;
      const seat = sub.deliver && seatNamed(now, sub.deliver.seat)?.state === "active" ? sub.deliver.seat : undefined;
      if (runsTurns(now) && !now.archivedAt) this.thread.tables.queue(e.seq, body.text, watchSender(watch), seat);
      return fresh.length;
    });
    if (taken > 0 && !cut) this.kick();
    return ok({ taken });
  }
}
