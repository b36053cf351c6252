import { CODES } from "../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import type { TranscriptEntry } from "../../src/api/engine.js";
import type { WakeFilter } from "../../src/api/subscriptions.js";
import { FIRST_SEAT } from "../../src/api/seats.js";
import type { MessageAccepted, ThreadRow, ThreadSpec } from "../../src/api/threads.js";
import type { EventBodies, EventKind } from "../../src/api/events.js";
import { workspaceOf } from "../../src/platform/stubs.js";
import type { TurnDriver } from "./turn/driver.js";
import { archivedRefusal, missing } from "./refusals.js";
import type { PreparedEvent } from "./log/event-log.js";
import type { Watchers } from "./orchestration/watchers.js";
import { restage, type Accepted, type ThreadAccess } from "./thread-access.js";
import { firstSeat, shownSpec, type ThreadState } from "./thread-state.js";
import type { ThreadNews } from "../workspace/feed.js";

/** What the lifecycle uses of its Thread. */
export type LifecycleThread = Pick<ThreadAccess, "env" | "state" | "append" | "tables" | "saveState" | "prepareOrRefuse" | "commits" | "syncCatalogNow">;

/** What only the lifecycle is given of the Thread: the one place its state is first set, and the feed's news. */
export interface Creation {
  /** Inside the creating commit: the new state becomes the Thread's. */
  adopt(state: ThreadState): void;
  /** Writes one event at the thread's creation time; call only inside a commit. */
  appendAt(prepared: PreparedEvent, now: Date): Accepted;
  /** The thread's row as the routes answer it. */
  row(): ThreadRow;
  /** News for the workspace's feed, sent with the next push. */
  tell(news: ThreadNews): void;
}

/** A fork's origin, its transcript parsed. */
export interface ForkOf {
  parent: string;
  atSeq: number;
  transcript: TranscriptEntry[];
}

/**
 * The thread's row as its workspace sees it: created, changed (every part's change to
 * the row comes here, through `ThreadAccess.change`), retired and restored (a head gives its
 * workspace's head slot up and claims it back), a head made a chat, the seat lease.
 */
export class Lifecycle {
  constructor(
    private readonly thread: LifecycleThread,
    private readonly turns: Pick<TurnDriver, "reportToParent" | "kick">,
    private readonly creation: Creation,
    private readonly watchers: Pick<Watchers, "add">,
  ) {}

  /** Creates the thread: its state, its `spawn` event (and a fork's transcript), its place in the catalog and its workspace's subscriptions. */
  async create(id: string, spec: ThreadSpec, fork: ForkOf | undefined, delegatedBy: { parent: string; operation: string } | undefined): Promise<Outcome<ThreadRow>> {
    const prepared = await this.thread.prepareOrRefuse("spawn", { spec: shownSpec(spec) });
    if (!prepared.ok) return prepared;
    const forked = fork ? await this.thread.prepareOrRefuse("fork", fork) : null;
    if (forked && !forked.ok) return forked;
    const outcome = await this.thread.commits.write((): Outcome<true> => {
      if (this.thread.state()) return refuse(409, `thread ${id} already exists`, CODES.threadExists);
      const now = new Date();
      const state: ThreadState = {
        id,
        spec,
        parent: fork?.parent ?? delegatedBy?.parent ?? null,
        forkedAtSeq: fork?.atSeq ?? null,
        createdAt: now.toISOString(),
        archivedAt: null,
        archiveReason: null,
        stage: "idle",
        cost: { usd: 0, inputTokens: 0, outputTokens: 0 },
        seatLease: null,
        turn: null,
        turns: 0,
        degraded: null,
        loop: null,
        chainStep: 0,
        seats: [],
        holder: FIRST_SEAT,
        ...(delegatedBy ? { delegation: { ...delegatedBy, outcome: null, reported: false } } : {}),
      };
      this.creation.adopt(state);
      const spawned = this.creation.appendAt(prepared.value, now);
      state.seats = [firstSeat(spec, spawned.seq)];
      this.thread.saveState();
      if (forked) {
        const e = this.creation.appendAt(forked.value, now);
        for (const entry of fork!.transcript) this.thread.tables.addEntry(e.seq, entry);
      }
      return ok(true);
    });
    if (!outcome.ok) return outcome;
    this.creation.tell({ kind: "thread-spawned" });
    await this.thread.syncCatalogNow();
    // Subscriptions to its workspace's threads watch this one too (not its own: a thread is
    // not woken by itself). Read once the catalog lists it: a subscription made meanwhile
    // either is read here or finds this thread in the catalog.
    if (spec.workspace)
      for (const w of await workspaceOf(this.thread.env, spec.workspace).watches()) if (w.subscriber !== id) await this.watchers.add(w.watch, w.subscriber, JSON.parse(w.filter) as WakeFilter);
    return ok(this.creation.row());
  }

  /**
   * A change to the thread's row, recorded as an event. `refusal` is asked before and
   * again inside the commit (the awaits between can change the answer); the catalog
   * learns of the change at once, and the workspace with it, along with `news` for its feed.
   */
  async change<K extends EventKind>(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState, event: Accepted) => void,
    news?: ThreadNews,
  ): Promise<Outcome<MessageAccepted>> {
    const s = this.thread.state();
    if (!s) return missing();
    const early = refusal(s);
    if (early) return early;
    const prepared = await this.thread.prepareOrRefuse(kind, body);
    if (!prepared.ok) return prepared;
    const outcome = await this.thread.commits.write((): Outcome<MessageAccepted> => {
      const late = refusal(this.thread.state()!);
      if (late) return late;
      const event = this.thread.append(prepared.value);
      apply(this.thread.state()!, event);
      this.thread.saveState();
      return ok({ seq: event.seq, ts: event.ts });
    });
    if (!outcome.ok) return outcome;
    // Told only once durable, so the feed never announces what a crash could take back.
    if (news) this.creation.tell(news);
    await this.thread.syncCatalogNow();
    return outcome;
  }

  /** Retires the thread; a retired head gives its workspace's head slot up. */
  async archive(reason: string | null): Promise<Outcome<MessageAccepted>> {
    const retired = (s: ThreadState) => (s.archivedAt ? archivedRefusal(s) : null);
    const outcome = await this.change(
      "archive",
      { reason },
      retired,
      (s, e) => {
        s.archivedAt = e.ts;
        s.archiveReason = reason;
        // A delegation's child retired before it answered: its parent hears that, instead of waiting for ever.
        if (s.delegation && !s.delegation.outcome) s.delegation.outcome = { status: "cancelled", error: `the child was retired before it answered${reason ? `: ${reason}` : ""}` };
      },
      { kind: "thread-archived", reason },
    );
    if (outcome.ok) void this.turns.reportToParent();
    if (outcome.ok && this.thread.state()!.spec.role === "head") await workspaceOf(this.thread.env, this.thread.state()!.spec.workspace).releaseHead(this.thread.state()!.id);
    return outcome;
  }

  /** Restores a retired thread; a head needs its workspace's head slot back (409 if taken meanwhile). */
  async restore(): Promise<Outcome<MessageAccepted>> {
    const s = this.thread.state();
    if (!s) return missing();
    const live = (t: ThreadState) => (t.archivedAt ? null : refuse(409, `thread ${t.id} is not retired`, CODES.threadNotArchived));
    const early = live(s);
    if (early) return early;
    const workspace = workspaceOf(this.thread.env, s.spec.workspace);
    let taken = false;
    if (s.spec.role === "head") {
      const claim = await workspace.claimHead(s.id);
      if (claim.holder)
        return refuse(409, `workspace ${s.spec.workspace} has another head (${claim.holder}) since this one was retired`, CODES.headTaken, { head: claim.holder });
      taken = claim.taken;
    }
    const outcome = await this.change(
      "restore",
      {},
      live,
      (t) => {
        t.archivedAt = null;
        t.archiveReason = null;
      },
      { kind: "thread-restored" },
    );
    if (!outcome.ok && taken) await workspace.releaseHead(s.id);
    // A loop's next prompt may have waited out the retirement.
    if (outcome.ok) this.turns.kick();
    return outcome;
  }

  /** Retires a head to `chat` (the only role change there is), freeing the head slot. */
  async retireHead(): Promise<Outcome<MessageAccepted>> {
    const head = (s: ThreadState) => (s.spec.role === "head" ? null : refuse(409, `thread ${s.id} is not a head`, CODES.notAHead, { role: s.spec.role }));
    const outcome = await this.change("role", { from: "head", to: "chat" }, head, (s) => {
      s.spec = { ...s.spec, role: "chat" };
    });
    if (outcome.ok) await workspaceOf(this.thread.env, this.thread.state()!.spec.workspace).releaseHead(this.thread.state()!.id);
    return outcome;
  }

  async setSeatLease(seatLease: string | null): Promise<Outcome<MessageAccepted>> {
    return this.change("seat-lease", { seatLease }, () => null, (s) => {
      // A seat that lets its thread go ends that thread's work; taking it again reopens it.
      s.leaseReleased = seatLease === null && (s.seatLease !== null || s.leaseReleased === true);
      s.seatLease = seatLease;
      restage(this.thread);
    });
  }
}
