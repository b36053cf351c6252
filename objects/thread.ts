import { DurableObject } from "cloudflare:workers";
import type { CompactionMode, CompactionStatus, CompactResult } from "../src/api/compaction.js";
import type { AttachmentEntry, AttachmentInput, AttachmentRef } from "../src/api/attachments.js";
import type { OperationAccepted, OperationKind, ReportOperation } from "../src/api/operations.js";
import { attachmentBytes, attachmentPath } from "../src/rules/attachments.js";
import { emptyMessageRefusal } from "../src/rules/message-empty.js";
import { FIRST_SEAT, type Handoff, type HandoffContext, type HandoffList, type HandoffOffered, type ReplaceResult, type Seat, type SeatList } from "../src/api/seats.js";
import type { ApprovalDecision, Json, QuestionAction, TranscriptEntry } from "../src/api/engine.js";
import { CODES } from "../src/api/errors.js";
import type { CycleBody, EventBodies, EventKind, MemoryRetainedBody } from "../src/api/events.js";
import type { MessageAccepted, PatchMessage, PostMessage, ThreadHead, ThreadRow, ThreadSpec } from "../src/api/threads.js";
import type { ApprovalResolved, LoopState, QuestionStatus, SendResult, SteeringEntry, TurnResult, TurnStatus } from "../src/api/turns.js";
import { readConfig, type RuntimeConfig } from "../src/platform/config.js";
import type { Env } from "../src/platform/env.js";
import { catalogOf, workspaceOf } from "../src/platform/stubs.js";
import { BlobStore, blobSaveRefusal } from "./thread/blob-store.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { AlarmSchedule } from "./lib/alarm-schedule.js";
import { addMissingColumn } from "./lib/sql-columns.js";
import { DeltaHub } from "./thread/delta-hub.js";
import { EventLog, LOG_SCHEMA, type PreparedEvent, type SerializedEvent, type StoredEvent } from "./thread/event-log.js";
import { FollowHub } from "./lib/follow-hub.js";
import { forwardPage, reversePage } from "./lib/pages.js";
import { SSE_HEADERS } from "./lib/sse.js";
import { ok, refuse, type Outcome } from "../src/api/outcome.js";
import { archivedRefusal, degradedRefusal, missing, recordOnlyRefusal, runsTurns, seatRefusal } from "./thread/refusals.js";
import { firstSeat, loadState, shownSpec, STATE_SCHEMA, summarize, toRow, type ThreadState } from "./thread/thread-state.js";
import { restage, type Accepted, type ThreadAccess } from "./thread/thread-access.js";
import type { Handoffs } from "./thread/handoffs.js";
import type { GateRequest, GateResult } from "../src/api/cycles.js";
import { OPERATIONS_SCHEMA } from "./thread/operations.js";
import { digestOf, IdempotencyKeys } from "./thread/idempotency.js";
import { Subscriptions, SUBSCRIPTIONS_SCHEMA } from "./thread/subscriptions.js";
import { Watchers, WATCHERS_SCHEMA } from "./thread/watchers.js";
import type { Subscription, WakeFilter, WakeItem, WatchTarget } from "../src/api/subscriptions.js";
import { Seats, type SeatTarget } from "./thread/seats.js";
import { TURN_SCHEMA, TurnTables } from "./thread/turn-tables.js";
import { TurnDriver } from "./thread/turn-driver.js";
import { TurnTools } from "./thread/turn-tools.js";
import type { ToolTurn } from "../src/api/tools.js";
import type { ThreadNews } from "./workspace/feed.js";

/** How long after unpushed activity the catalog's safety alarm comes. */
const SAFETY_ALARM_MS = 60_000;

export interface TailQuery {
  after?: number;
  before?: number;
  limit: number;
  waitMs: number;
}

/**
 * One thread: the single writer of its event log, its row, its held messages and its
 * subscribers. Every rule that must be atomic for a thread is decided here.
 *
 * Every change goes through the commit queue (group commit): a method does its awaiting
 * first (blob uploads, digests), then hands the queue a synchronous function that
 * re-checks what the awaits could have changed and writes. That function runs atomically
 * in the next batch, and the method's answer waits until the batch is on disk.
 */
export class Thread extends DurableObject<Env> {
  private readonly config: RuntimeConfig;
  private readonly sql: SqlStorage;
  private readonly log: EventLog;
  private readonly blobs: BlobStore;
  private readonly followers: FollowHub<StoredEvent, SerializedEvent>;
  private readonly deltas: DeltaHub;
  private state: ThreadState | null;
  private updatedAt: string;
  /** The in-memory timer that pushes activity to the catalog; at most one at a time. */
  private activityTimer: ReturnType<typeof setTimeout> | null = null;
  /** Since when the catalog has not had this instance's activity (memory only: the alarm set for it survives the instance). */
  private unpushedSince: number | null = null;
  /** When a failed push is tried again. */
  private pushRetryAt: number | null = null;
  /** The object's one alarm, which every timed part reports to. */
  private readonly alarms: AlarmSchedule;
  /** The summary the catalog and the workspace both took last, as JSON (memory only: a new instance pushes). */
  private pushed: string | null = null;
  private readonly waiters = new Set<() => void>();
  private readonly commits: CommitQueue;
  /** Events of the batch being committed: readers see them once the batch is durable. */
  private unpublished: Accepted[] = [];
  private readonly tables: TurnTables;
  private readonly driver: TurnDriver;
  private readonly seats: Seats;
  private readonly idempotency: IdempotencyKeys;
  private readonly watchers: Watchers;
  private readonly subscriptionsOf: Subscriptions;
  /** A commit of this batch matched a watcher: its delivery follows the batch to disk. */
  private matched = false;
  /** What the Thread's parts may use of it (the turn driver, seats, handoffs). */
  private readonly access: ThreadAccess;
  private readonly handoffs: Handoffs;
  private readonly tools: TurnTools;
  /** What the workspace's feed has not been told yet; it rides the next summary push (memory only). */
  private news: ThreadNews[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = readConfig(env);
    this.sql = ctx.storage.sql;
    this.sql.exec(LOG_SCHEMA + STATE_SCHEMA + TURN_SCHEMA + OPERATIONS_SCHEMA + SUBSCRIPTIONS_SCHEMA + WATCHERS_SCHEMA);
    // Held messages made before seats lack who sent them and which seat they are for.
    addMissingColumn(this.sql, "held", "sender");
    addMissingColumn(this.sql, "held", "seat");
    this.commits = new CommitQueue(ctx.storage, (durable) => this.publish(durable), () => this.rolledBack());
    this.blobs = new BlobStore(env.BLOBS, this.config.faults.has("blob-put"));
    this.log = new EventLog(this.sql, this.blobs, this.config.blobThreshold);
    this.tables = new TurnTables(this.sql);
    this.followers = new FollowHub(this.log, this.config.heartbeatMs);
    this.deltas = new DeltaHub(this.config.streamSubscribers, this.config.streamBuffer, this.config.heartbeatMs);
    const saved = this.sql.exec<{ state: string }>("SELECT state FROM thread").toArray()[0];
    this.state = saved ? loadState(saved.state) : null;
    const last = this.log.get(this.log.lastSeq);
    this.updatedAt = last?.ts ?? this.state?.createdAt ?? "";
    // The turn code reaches the Thread only through these closures: making the members
    // public instead would also make them callable over RPC.
    const access: ThreadAccess = {
      env,
      config: this.config,
      sql: this.sql,
      log: this.log,
      blobs: this.blobs,
      commits: this.commits,
      tables: this.tables,
      deltas: this.deltas,
      state: () => this.state,
      append: (prepared) => this.append(prepared),
      prepareOrRefuse: (kind, body) => this.prepareOrRefuse(kind, body),
      saveState: () => this.saveState(),
      change: (kind, body, refusal, apply) => this.change(kind, body, refusal, apply),
      syncCatalogNow: () => this.syncCatalogNow(),
      reschedule: () => this.reschedule(),
      abort: (reason) => ctx.abort(reason),
    };
    this.access = access;
    this.idempotency = new IdempotencyKeys(this.sql);
    this.watchers = new Watchers(access, this.config.faults.has("wake-deliver"));
    this.driver = new TurnDriver(access);
    this.subscriptionsOf = new Subscriptions(access, () => this.driver.kick());
    this.handoffs = this.driver.handoffs;
    this.seats = new Seats(access, this.driver, this.handoffs);
    this.tools = new TurnTools(access, this.handoffs);
    this.alarms = new AlarmSchedule(ctx.storage);
    for (const part of [this.driver.waits.alarm, this.handoffs.alarm, this.driver.startAlarm, this.driver.keepAliveAlarm, this.driver.reportAlarm, this.watchers.alarm]) this.alarms.add(part);
    this.alarms.add({
      name: "catalog",
      // A new instance does not know whether the last one's push landed: any alarm pushes what changed.
      everyAlarm: true,
      nextDueAt: () => this.pushRetryAt ?? (this.unpushedSince !== null ? this.unpushedSince + SAFETY_ALARM_MS : null),
      runDue: () => this.syncCatalogFromAlarm(),
    });
    // A fresh instance runs no turn: a turn still marked running was lost with the
    // instance (or the host) that ran it. Record that before anything else is served.
    if (this.state?.turn) void ctx.blockConcurrencyWhile(() => this.driver.loseTurn());
    // Matches the last instance did not deliver go now.
    if (this.state && this.watchers.pending()) this.watchers.schedule(0);
    // What came due while no instance ran, or was changed by one that stopped before it set the alarm.
    if (this.state) void this.reschedule();
  }

  // ---- creation and rows ----

  /** `fork.transcript` is JSON text (`TranscriptEntry[]`): RPC types cannot express any-JSON tool inputs. */
  async init(id: string, spec: ThreadSpec, forkOf?: { parent: string; atSeq: number; transcript: string }, delegatedBy?: { parent: string; operation: string }): Promise<Outcome<ThreadRow>> {
    const fork = forkOf ? { ...forkOf, transcript: JSON.parse(forkOf.transcript) as TranscriptEntry[] } : undefined;
    const prepared = await this.prepareOrRefuse("spawn", { spec: shownSpec(spec) });
    if (!prepared.ok) return prepared;
    const forked = fork ? await this.prepareOrRefuse("fork", fork) : null;
    if (forked && !forked.ok) return forked;
    const outcome = await this.commits.write((): Outcome<true> => {
      if (this.state) return refuse(409, `thread ${id} already exists`, CODES.threadExists);
      const now = new Date();
      this.state = {
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
      const spawned = this.append(prepared.value, now);
      this.state.seats = [firstSeat(spec, spawned.seq)];
      this.saveState();
      if (forked) {
        const e = this.append(forked.value, now);
        for (const entry of fork!.transcript) this.tables.addEntry(e.seq, entry);
      }
      return ok(true);
    });
    if (!outcome.ok) return outcome;
    this.news.push({ kind: "thread-spawned" });
    await this.syncCatalogNow();
    // Subscriptions to its workspace's threads watch this one too (not its own: a thread is
    // not woken by itself). Read once the catalog lists it: a subscription made meanwhile
    // either is read here or finds this thread in the catalog.
    if (spec.workspace)
      for (const w of await workspaceOf(this.env, spec.workspace).watches()) if (w.subscriber !== id) await this.watchers.add(w.watch, w.subscriber, JSON.parse(w.filter) as WakeFilter);
    return ok(this.row(this.state!));
  }

  get(): Outcome<ThreadRow> {
    const s = this.state;
    return s ? ok(this.row(s)) : missing();
  }

  head(): Outcome<ThreadHead> {
    const s = this.state;
    if (!s) return missing();
    return ok({
      id: s.id,
      type: s.spec.type,
      role: s.spec.role,
      workspace: s.spec.workspace,
      parent: s.parent,
      seatLease: s.seatLease,
      title: s.spec.title,
      createdAt: s.createdAt,
    });
  }

  // ---- messages ----

  postMessage(message: PostMessage, idempotencyKey?: string): Promise<Outcome<MessageAccepted & { replayed?: true }>> {
    return this.acceptMessage(message, idempotencyKey);
  }

  /** `onAccepted` runs inside the commit that writes the message, before anything that commit lets happen next. */
  private async acceptMessage(
    message: PostMessage,
    idempotencyKey?: string,
    onAccepted?: (seq: number) => void,
  ): Promise<Outcome<MessageAccepted & { replayed?: true }>> {
    if (!this.state) return missing();
    const digest = idempotencyKey ? await digestOf(message) : null;
    const files = message.attachments?.length ? await this.storeAttachments(message.attachments) : null;
    if (files && !files.ok) return files;
    const body = {
      text: message.text,
      ...(message.from ? { from: message.from } : {}),
      ...(message.hold ? { hold: true } : {}),
      ...(message.onBusy ? { onBusy: message.onBusy } : {}),
      ...(message.seat ? { seat: message.seat } : {}),
      ...(files ? { attachments: files.value } : {}),
    };
    const onBusy = message.onBusy ?? this.state.spec.onBusy;
    let interrupts = false;
    let steers = false;
    const prepared = await this.prepareOrRefuse("message", body);
    if (!prepared.ok) return prepared;
    const outcome = await this.commits.write((): Outcome<MessageAccepted & { replayed?: true }> => {
      if (this.state!.archivedAt) return archivedRefusal(this.state!);
      if (this.state!.degraded) return degradedRefusal(this.state!);
      const noSeat = message.seat ? seatRefusal(this.state!, message.seat) : null;
      if (noSeat) return noSeat;
      const running = message.hold || !runsTurns(this.state!) ? null : this.state!.turn;
      if (running && onBusy === "reject")
        return refuse(409, `thread ${this.state!.id} is running turn ${running.id}, and this message asked not to wait (onBusy: reject)`, CODES.threadBusy, { turnId: running.id });
      // Steering is for the seat whose turn runs (a message for another seat waits for that
      // seat's turn); a peer seat's own words are recorded, not answered here; attachments
      // are placed as a turn starts, so a message carrying some waits for the next one.
      const to = running ? this.driver.route(message.seat ?? null, message.from ?? null) : null;
      const answeredHere = to !== null && to.here && !to.own;
      interrupts = answeredHere && onBusy === "interrupt";
      steers = answeredHere && onBusy === "steer" && !files && to.seat === (running!.seat ?? FIRST_SEAT);
      const seen = idempotencyKey ? this.idempotency.seen(idempotencyKey, digest!, "message") : null;
      if (seen) return seen.ok ? ok({ ...seen.value, replayed: true }) : seen;
      const event = this.append(prepared.value);
      onAccepted?.(event.seq);
      if (files) this.tables.addAttachments(event.seq, files.value);
      if (message.hold) this.sql.exec("INSERT INTO held (seq, text, sender, seat) VALUES (?, ?, ?, ?)", event.seq, message.text, message.from ?? null, message.seat ?? null);
      else if (steers) this.tables.addSteer(event.seq, running!.id, message.text, message.from ?? null, message.seat ?? null);
      else if (runsTurns(this.state!)) this.tables.queue(event.seq, message.text, message.from, message.seat);
      if (idempotencyKey) this.idempotency.remember(idempotencyKey, digest!, event.seq, event.ts);
      return ok({ seq: event.seq, ts: event.ts });
    });
    if (outcome.ok && steers && !outcome.value.replayed) void this.driver.steer(outcome.value.seq);
    else if (outcome.ok && !message.hold) this.driver.kick();
    // The message is queued first, so the turn after the interrupted one answers it.
    if (outcome.ok && interrupts && !outcome.value.replayed) void this.driver.interrupt();
    return outcome;
  }

  /** A message's attachments into the blob store, by hash, before its event is written; or why they are refused. */
  private async storeAttachments(inputs: readonly AttachmentInput[]): Promise<Outcome<AttachmentRef[]>> {
    const decoded = attachmentBytes(inputs, this.config.attachmentMaxBytes);
    if (!decoded.ok) return decoded;
    try {
      const refs = await Promise.all(decoded.value.map((bytes) => this.blobs.putBytes(bytes)));
      return ok(refs.map((r, i) => ({ name: inputs[i]!.name, mediaType: inputs[i]!.mediaType, bytes: r.bytes, sha256: r.sha256 })));
    } catch (err) {
      return blobSaveRefusal(err, "an attachment");
    }
  }

  /** The thread's attachments, oldest first, with where the engines find each. */
  attachments(): Outcome<{ attachments: AttachmentEntry[] }> {
    if (!this.state) return missing();
    return ok({ attachments: this.tables.attachments().map((a) => ({ ...a, path: attachmentPath(a.seq, a.name) })) });
  }

  /** One attachment's bytes and media type, by its hash; only an attachment of this thread. */
  async attachment(sha256: string): Promise<Outcome<{ mediaType: string; name: string; bytes: Uint8Array }>> {
    if (!this.state) return missing();
    const found = this.tables.attachmentBySha(sha256);
    if (!found) return refuse(404, `thread has no attachment ${sha256}`, CODES.attachmentNotFound);
    try {
      return ok({ mediaType: found.mediaType, name: found.name, bytes: await this.blobs.getBytes(sha256) });
    } catch (err) {
      return refuse(503, `the blob store could not give attachment ${sha256}: ${(err as Error).message}`, CODES.blobStoreUnavailable);
    }
  }

  async editHeld(seq: number, patch: PatchMessage): Promise<Outcome<MessageAccepted>> {
    const held = this.heldOrRefusal(seq);
    if (!held.ok) return held;
    // An edit may not empty what a post could not have sent empty: its release would start a turn on nothing.
    const empty = patch.text !== undefined ? emptyMessageRefusal({ text: patch.text, attachments: this.tables.attachments(seq) }) : null;
    if (empty) return empty;
    const edit = patch.text !== undefined ? await this.prepareOrRefuse("message-edited", { target: seq, text: patch.text }) : null;
    if (edit && !edit.ok) return edit;
    const release = patch.hold === false ? await this.prepareOrRefuse("message-released", { target: seq }) : null;
    if (release && !release.ok) return release;
    const outcome = await this.commits.write((): Outcome<MessageAccepted> => {
      const still = this.heldOrRefusal(seq);
      if (!still.ok) return still;
      if (release && this.state!.degraded) return degradedRefusal(this.state!);
      let last: Accepted | null = null;
      if (edit) {
        last = this.append(edit.value);
        this.sql.exec("UPDATE held SET text = ? WHERE seq = ?", patch.text!, seq);
      }
      if (release) {
        last = this.append(release.value);
        const held = this.sql.exec<{ text: string; sender: string | null; seat: string | null }>("SELECT text, sender, seat FROM held WHERE seq = ?", seq).one();
        if (runsTurns(this.state!)) this.tables.queue(seq, held.text, held.sender ?? undefined, held.seat ?? undefined);
        this.sql.exec("DELETE FROM held WHERE seq = ?", seq);
      }
      return ok({ seq: last!.seq, ts: last!.ts });
    });
    if (outcome.ok && release) this.driver.kick();
    return outcome;
  }

  async deleteHeld(seq: number): Promise<Outcome<MessageAccepted>> {
    const held = this.heldOrRefusal(seq);
    if (!held.ok) return held;
    const prepared = await this.prepareOrRefuse("message-deleted", { target: seq });
    if (!prepared.ok) return prepared;
    return this.commits.write((): Outcome<MessageAccepted> => {
      const still = this.heldOrRefusal(seq);
      if (!still.ok) return still;
      this.sql.exec("DELETE FROM held WHERE seq = ?", seq);
      const e = this.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts });
    });
  }

  /** Appends an event on behalf of an engine or a flow (tool results, cycle events). */
  async record<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<MessageAccepted>> {
    if (!this.state) return missing();
    const prepared = await this.prepareOrRefuse(kind, body);
    if (!prepared.ok) return prepared;
    return this.commits.write(() => {
      const e = this.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts });
    });
  }

  // ---- retire, restore, lease ----

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
    if (outcome.ok) void this.driver.reportToParent();
    if (outcome.ok && this.state!.spec.role === "head") await workspaceOf(this.env, this.state!.spec.workspace).releaseHead(this.state!.id);
    return outcome;
  }

  /** Restores a retired thread; a head needs its workspace's head slot back (409 if taken meanwhile). */
  async restore(): Promise<Outcome<MessageAccepted>> {
    const s = this.state;
    if (!s) return missing();
    const live = (t: ThreadState) => (t.archivedAt ? null : refuse(409, `thread ${t.id} is not retired`, CODES.threadNotArchived));
    const early = live(s);
    if (early) return early;
    const workspace = workspaceOf(this.env, s.spec.workspace);
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
    if (outcome.ok) this.driver.kick();
    return outcome;
  }

  /** Retires a head to `chat` (the only role change there is), freeing the head slot. */
  async retireHead(): Promise<Outcome<MessageAccepted>> {
    const head = (s: ThreadState) => (s.spec.role === "head" ? null : refuse(409, `thread ${s.id} is not a head`, CODES.notAHead, { role: s.spec.role }));
    const outcome = await this.change("role", { from: "head", to: "chat" }, head, (s) => {
      s.spec = { ...s.spec, role: "chat" };
    });
    if (outcome.ok) await workspaceOf(this.env, this.state!.spec.workspace).releaseHead(this.state!.id);
    return outcome;
  }

  async setSeatLease(seatLease: string | null): Promise<Outcome<MessageAccepted>> {
    return this.change("seat-lease", { seatLease }, () => null, (s) => {
      // A seat that lets its thread go ends that thread's work; taking it again reopens it.
      s.leaseReleased = seatLease === null && (s.seatLease !== null || s.leaseReleased === true);
      s.seatLease = seatLease;
      restage(this.access);
    });
  }

  /**
   * A change to the thread's row, recorded as an event. `refusal` is asked before and
   * again inside the commit (the awaits between can change the answer); the catalog
   * learns of the change at once, and the workspace with it, along with `news` for its feed.
   */
  private async change<K extends EventKind>(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState, event: Accepted) => void,
    news?: ThreadNews,
  ): Promise<Outcome<MessageAccepted>> {
    if (!this.state) return missing();
    const early = refusal(this.state);
    if (early) return early;
    const prepared = await this.prepareOrRefuse(kind, body);
    if (!prepared.ok) return prepared;
    const outcome = await this.commits.write((): Outcome<MessageAccepted> => {
      const late = refusal(this.state!);
      if (late) return late;
      const event = this.append(prepared.value);
      apply(this.state!, event);
      this.saveState();
      return ok({ seq: event.seq, ts: event.ts });
    });
    if (!outcome.ok) return outcome;
    // Told only once durable, so the feed never announces what a crash could take back.
    if (news) this.news.push(news);
    await this.syncCatalogNow();
    return outcome;
  }

  // ---- reading ----

  /** A page of the log, already serialized as the JSON the route answers with. */
  async page(q: TailQuery): Promise<Outcome<string>> {
    if (!this.state) return missing();
    if (q.before !== undefined) {
      const events = await this.log.serialize(this.log.backward(q.before, q.limit));
      return ok(reversePage(events, (events[events.length - 1]?.seq ?? 1) > 1));
    }
    const after = q.after ?? 0;
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    if (q.waitMs > 0 && after >= this.log.durableSeq) await this.waitForAppend(q.waitMs);
    const rows = this.log.forward(after, q.limit);
    const events = await this.log.serialize(rows);
    const nextAfter = rows.length ? rows[rows.length - 1]!.seq : after;
    return ok(forwardPage(events, nextAfter, nextAfter < this.log.durableSeq));
  }

  /** The whole body of one tool result, as JSON text. */
  async toolResult(seq: number): Promise<Outcome<string>> {
    if (!this.state) return missing();
    const row = this.log.get(seq);
    if (!row) return refuse(404, `thread has no event ${seq}`, CODES.eventNotFound);
    if (row.kind !== "tool-result") return refuse(404, `event ${seq} is a ${row.kind}, not a tool result`, CODES.notAToolResult);
    return ok(await this.log.body(row));
  }

  private follow(after: number, signal: AbortSignal): Outcome<ReadableStream<Uint8Array>> {
    if (!this.state) return missing();
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    return ok(this.followers.open(after, { signal }));
  }

  private stream(): Outcome<ReadableStream<Uint8Array>> {
    if (!this.state) return missing();
    const stream = this.deltas.open();
    if (!stream)
      return refuse(429, `thread already has ${this.config.streamSubscribers} stream subscribers`, CODES.streamSubscribersFull, {
        limit: this.config.streamSubscribers,
      });
    return ok(stream);
  }

  /**
   * The SSE routes come in over fetch, not RPC: a Response the router returns as it is
   * is proxied by workerd natively, while a stream returned over RPC costs a JS hop per
   * chunk on the router's side, per follower, per event. Paths: /follow?after=N, /stream.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const outcome =
      url.pathname === "/follow" ? this.follow(Number(url.searchParams.get("after")), request.signal) : url.pathname === "/stream" ? this.stream() : null;
    if (!outcome) return Response.json({ error: `no object route ${url.pathname}`, code: CODES.routeNotFound }, { status: 404 });
    if (!outcome.ok) return Response.json(outcome.body, { status: outcome.status });
    return new Response(outcome.value, { headers: SSE_HEADERS });
  }

  /** Live deltas from an engine: sent to `stream` subscribers, never stored. */
  publishDeltas(frames: unknown[]): void {
    this.deltas.publish(frames);
  }

  subscriberCounts(): { follow: number; stream: number } {
    return { follow: this.followers.size, stream: this.deltas.size };
  }

  // ---- turns ----

  /** Posts a message and waits for the turn that answers it (`POST /threads/:id/send`). */
  async send(message: PostMessage): Promise<Outcome<SendResult>> {
    const recordOnly = this.state ? recordOnlyRefusal(this.state) : null;
    if (recordOnly) return recordOnly;
    // Waiting from the message's own commit: a message a peer's seat answers can be settled
    // by the next commit of the same batch, before this call would hear its answer.
    let answered: Promise<Outcome<TurnResult>> | null = null;
    const accepted = await this.acceptMessage(message, undefined, (seq) => (answered = this.driver.answer(seq)));
    if (!accepted.ok) return accepted;
    const { seq, ts } = accepted.value;
    const result = await answered!;
    return result.ok ? ok({ seq, ts, ...result.value }) : result;
  }

  turnStatus(): Outcome<TurnStatus> {
    return this.driver.turnStatus();
  }

  interrupt(): Promise<Outcome<TurnResult>> {
    return this.driver.interrupt();
  }

  /** Frees this thread's session for the live-session cap (see TurnDriver.evict). */
  evict(why: string, idleMs: number): Promise<Outcome<TurnResult>> {
    return this.driver.evict(why, idleMs);
  }

  resolveApproval(approvalId: string, decision: ApprovalDecision): Promise<Outcome<ApprovalResolved>> {
    return this.driver.waits.resolveApproval(approvalId, decision);
  }

  question(requestId: string): Outcome<QuestionStatus> {
    return this.driver.waits.question(requestId);
  }

  resolveQuestion(requestId: string, action: QuestionAction, answer?: string): Promise<Outcome<QuestionStatus>> {
    return this.driver.waits.resolveQuestion(requestId, action, answer);
  }

  recover(reason: string): Promise<Outcome<MessageAccepted>> {
    return this.driver.recover(reason);
  }

  forkSource(atSeq: number): Outcome<{ spec: ThreadSpec; transcript: string }> {
    return this.driver.forkSource(atSeq);
  }

  reconcile(): Promise<{ running: boolean }> {
    return this.driver.reconcile();
  }

  // ---- cycle events, gates, merges ----

  /** `data` is JSON text: RPC types cannot express any JSON. */
  async cycleEvent(event: Omit<CycleBody, "data">, data?: string): Promise<Outcome<MessageAccepted>> {
    return this.record("cycle", { ...event, ...(data !== undefined ? { data: JSON.parse(data) as Json } : {}) });
  }

  gate(request: GateRequest): Promise<Outcome<GateResult>> {
    return this.driver.gates.ask(request);
  }

  // ---- subscriptions: what this thread watches, and who watches it ----

  subscriptionList(): Outcome<{ subscriptions: Subscription[] }> {
    return this.subscriptionsOf.list();
  }

  subscribe(target: WatchTarget, filter: WakeFilter, note: string | null, deliver: { seat: string } | null): Promise<Outcome<Subscription>> {
    return this.subscriptionsOf.add(target, filter, note, deliver);
  }

  unsubscribe(watch: string): Promise<Outcome<Subscription>> {
    return this.subscriptionsOf.remove(watch);
  }

  /** A watched thread hands over its matching events. */
  wake(watch: string, source: string, items: WakeItem[]): Promise<Outcome<{ taken: number }>> {
    return this.subscriptionsOf.wake(watch, source, items);
  }

  /** `filter` is JSON text (`WakeFilter`). */
  async addWatcher(watch: string, subscriber: string, filter: string): Promise<Outcome<true>> {
    if (!this.state) return missing();
    await this.watchers.add(watch, subscriber, JSON.parse(filter) as WakeFilter);
    return ok(true);
  }

  async removeWatcher(watch: string): Promise<Outcome<true>> {
    if (!this.state) return missing();
    await this.watchers.remove(watch);
    return ok(true);
  }

  // ---- operations ----

  // Operations carry any JSON (detail, data, result), which RPC types cannot express: they cross as JSON text.

  operations(): Outcome<string> {
    const list = this.driver.operations.list();
    return list.ok ? ok(JSON.stringify(list.value)) : list;
  }

  operation(id: string): Outcome<string> {
    const one = this.driver.operations.get(id);
    return one.ok ? ok(JSON.stringify(one.value)) : one;
  }

  /** The answer an Idempotency-Key already got, before a delegation spawns a second child for it. */
  operationReplay(key: string, request: string): Promise<Outcome<OperationAccepted> | null> {
    return this.driver.operations.replay(key, JSON.parse(request) as unknown);
  }

  /** `detail` is JSON text; `request` is what an Idempotency-Key is checked against (the route's whole body, as JSON text). */
  startOperation(
    body: { operation?: string; kind: OperationKind; title: string; child?: string; prompt?: string; detail?: string },
    idempotency?: { key: string; request: string },
  ): Promise<Outcome<OperationAccepted>> {
    const { detail, ...rest } = body;
    return this.driver.operations.start(
      { ...rest, ...(detail !== undefined ? { detail: JSON.parse(detail) as Record<string, Json> } : {}) },
      idempotency ? { key: idempotency.key, request: JSON.parse(idempotency.request) as unknown } : undefined,
    );
  }

  /** `report` is JSON text (`ReportOperation`): RPC types cannot express its any-JSON result. */
  async reportOperation(id: string, report: string, by: "caller" | "child", idempotencyKey?: string): Promise<Outcome<OperationAccepted>> {
    const outcome = await this.driver.operations.report(id, JSON.parse(report) as ReportOperation, by, idempotencyKey);
    // A delegation's outcome queued the wake that starts a turn here.
    if (outcome.ok) this.driver.kick();
    return outcome;
  }

  // ---- seats and handoffs ----

  /** Every message sent to steer a running turn, oldest first, and what became of it. */
  steering(): Outcome<{ steering: SteeringEntry[] }> {
    if (!this.state) return missing();
    return ok({
      steering: this.tables.steers().map((r) => ({
        seq: r.seq,
        turnId: r.turnId,
        taken: r.state === "pending" ? null : r.state === "taken",
        reason: r.reason,
        resolvedSeq: r.resolvedSeq,
      })),
    });
  }

  seatList(): Outcome<SeatList> {
    return this.seats.list();
  }

  joinSeat(name: string, target: SeatTarget, role: string | null): Promise<Outcome<Seat>> {
    return this.seats.join(name, target, role);
  }

  replaceSeat(name: string, target: SeatTarget): Promise<Outcome<ReplaceResult>> {
    return this.seats.replace(name, target);
  }

  removeSeat(name: string): Promise<Outcome<{ seat: Seat; holder: string; seq: number; ts: string }>> {
    return this.seats.remove(name);
  }

  handoffList(): Outcome<HandoffList> {
    return this.handoffs.list();
  }

  offerHandoff(to: string, note: string | null, context: HandoffContext): Promise<Outcome<HandoffOffered>> {
    return this.handoffs.offer(to, note, context, "caller");
  }

  acceptHandoff(fromSeq: number): Promise<Outcome<Handoff>> {
    return this.handoffs.accept(fromSeq);
  }

  declineHandoff(fromSeq: number): Promise<Outcome<Handoff>> {
    return this.handoffs.decline(fromSeq);
  }

  // ---- memory this thread recorded (docs/memory.md) ----

  /** A retain that named this thread, recorded in its log; a retired thread records it too, as what happened. */
  noteMemory(body: MemoryRetainedBody): Promise<Outcome<MessageAccepted>> {
    return this.record("memory-retained", body);
  }

  // ---- the runtime's tools, as a running turn calls them (docs/tools.md) ----

  toolTurn(turnId: string): Outcome<ToolTurn> {
    return this.tools.turn(turnId);
  }

  offerHandoffFromTurn(turnId: string, to: string, note: string | null, context: HandoffContext): Promise<Outcome<HandoffOffered>> | Outcome<never> {
    return this.tools.offer(turnId, to, note, context);
  }

  /** `report` is a `ReportOperation` as JSON text (RPC cannot type its any-JSON result). */
  reportToDelegator(turnId: string, report: string): Promise<Outcome<{ operation: string; parent: string }>> {
    return this.tools.report(turnId, JSON.parse(report) as ReportOperation);
  }

  // ---- the context window ----

  compactionStatus(): Outcome<CompactionStatus> {
    return this.driver.compaction.status();
  }

  compact(mode: CompactionMode | undefined): Promise<Outcome<CompactResult>> {
    return this.driver.compaction.compact(mode);
  }

  // ---- loops ----

  loopState(): Outcome<{ loop: LoopState | null }> {
    return this.driver.loops.loopState();
  }

  async startLoop(prompt: string, maxTurns: number | undefined, until: string | undefined): Promise<Outcome<LoopState>> {
    const recordOnly = this.state ? recordOnlyRefusal(this.state) : null;
    if (recordOnly) return recordOnly;
    return this.driver.loops.startLoop(prompt, maxTurns, until);
  }

  continueLoop(more: number | undefined): Promise<Outcome<LoopState>> {
    return this.driver.loops.continueLoop(more);
  }

  stopLoop(): Promise<Outcome<LoopState>> {
    return this.driver.loops.stopLoop();
  }

  // ---- catalog sync ----

  /** Every timed part of the thread that is due: waits' expiries, retries, the keep-alive, the catalog's safety net. */
  override async alarm(): Promise<void> {
    await this.alarms.run();
  }

  // ---- internals ----

  private reschedule(): Promise<void> {
    return this.alarms.update().catch((err: unknown) => console.error(`thread ${this.state?.id}: its alarm could not be set: ${(err as Error).message}`));
  }

  /** Writes one event; call only inside a CommitQueue write. */
  private append(prepared: PreparedEvent, now?: Date): Accepted {
    const event = this.log.commit(prepared, now);
    this.unpublished.push(event);
    if (this.watchers.match(event, prepared, () => this.wakeDepth(event, prepared))) this.matched = true;
    this.scheduleCatalogSync();
    return event;
  }

  /** How many wakes led to an event: a wake message's own depth, or that of the turn it was written in. */
  private wakeDepth(event: Accepted, prepared: PreparedEvent): number {
    if (event.kind === "message" && prepared.blob === null) return (JSON.parse(prepared.text) as { wake?: { depth: number } }).wake?.depth ?? 0;
    // Written before the thread marks the turn running: the turn's depth is in its body.
    if (event.kind === "turn-started") return (JSON.parse(prepared.text) as { wakeDepth?: number }).wakeDepth ?? 0;
    return this.state?.turn?.wakeDepth ?? 0;
  }

  /**
   * A write was undone: its events are no longer in the log, so followers never see them,
   * and the state is what is on disk again (a write changes it in memory before the
   * statement that saves it, which a full volume can refuse).
   */
  private rolledBack(): void {
    this.log.rolledBack();
    this.unpublished = this.unpublished.filter((e) => e.seq <= this.log.lastSeq);
    const saved = this.sql.exec<{ state: string }>("SELECT state FROM thread").toArray()[0];
    this.state = saved ? loadState(saved.state) : null;
  }

  /** Shows a durable batch to followers (as one write each) and wakes waiting tails. */
  private publish(durable: boolean): void {
    const events = this.unpublished;
    this.unpublished = [];
    // Matches are delivered once on disk: a subscriber never hears of an event a crash could take back.
    if (this.matched && durable) {
      this.watchers.schedule();
      void this.reschedule();
    }
    this.matched = false;
    if (!this.followers.settle(events, durable)) return;
    if (events.length > 0) this.updatedAt = events[events.length - 1]!.ts;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  private async prepareOrRefuse<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<PreparedEvent>> {
    try {
      return ok(await this.log.prepare(kind, body));
    } catch (err) {
      return blobSaveRefusal(err, "a large body");
    }
  }

  private waitForAppend(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private heldOrRefusal(seq: number): Outcome<true> {
    if (!this.state) return missing();
    const held = this.sql.exec("SELECT seq FROM held WHERE seq = ?", seq).toArray().length > 0;
    if (held) return ok(true);
    const row = this.log.get(seq);
    if (!row || row.kind !== "message") return refuse(404, `thread has no message ${seq}`, CODES.messageNotFound);
    return refuse(409, `message ${seq} is not held: only held messages can be edited or deleted`, CODES.messageNotHeld);
  }

  private beyondEnd(after: number): Outcome<never> | null {
    if (after <= this.log.durableSeq) return null;
    return refuse(400, `after=${after} is beyond the thread's last event (${this.log.durableSeq})`, CODES.cursorBeyondEnd);
  }

  private row(s: ThreadState): ThreadRow {
    const held = this.sql.exec<{ seq: number }>("SELECT seq FROM held ORDER BY seq").toArray().map((r) => r.seq);
    return toRow(s, this.log.durableSeq, this.updatedAt, held);
  }

  private saveState(): void {
    this.sql.exec("INSERT OR REPLACE INTO thread (one, state) VALUES (1, ?)", JSON.stringify(this.state));
  }

  /**
   * Activity reaches the catalog from an in-memory timer, at most once per
   * `catalogSyncMs`. A durable alarm per push would cost two more commits each time
   * (setting it and deleting it once fired), which with many busy threads took a fifth
   * off the append rate. The alarm stays as a safety net, a minute after the first
   * activity no push has covered, so activity from just before a crash still reaches the
   * catalog after a restart; it moves only when it is later than that, about once a minute.
   */
  private scheduleCatalogSync(): void {
    if (!this.activityTimer)
      this.activityTimer = setTimeout(() => {
        this.activityTimer = null;
        void this.syncCatalogNow();
      }, this.config.catalogSyncMs);
    if (this.unpushedSince === null) {
      this.unpushedSince = Date.now();
      void this.reschedule();
    }
  }

  /** Pushes now, which covers any timed push still pending; a failure arms the alarm to retry soon. */
  private async syncCatalogNow(): Promise<void> {
    if (this.activityTimer) clearTimeout(this.activityTimer);
    this.activityTimer = null;
    try {
      await this.syncCatalog();
    } catch {
      await this.retryPush();
    }
  }

  private async syncCatalogFromAlarm(): Promise<void> {
    try {
      await this.syncCatalog(true);
    } catch (err) {
      console.error(`thread ${this.state?.id}: the catalog missed a change, retrying: ${(err as Error).message}`);
      await this.retryPush();
    }
  }

  /**
   * The catalog has the thread up to `seq`, as it was at `takenAt`: the safety net waits for
   * activity after it (a busy thread's always comes during the push, and would otherwise
   * keep it due).
   */
  private pushedUpTo(seq: number, takenAt: number): void {
    this.unpushedSince = this.log.lastSeq <= seq ? null : takenAt;
  }

  private async retryPush(): Promise<void> {
    this.pushRetryAt = Date.now() + this.config.catalogSyncMs;
    await this.reschedule();
  }

  /**
   * The summary goes to the catalog (the host's list) and to the workspace (its feed) at
   * once. Only the catalog is waited for: the workspace is shared by all its threads, and
   * a turn's end must not queue behind its commits. News the workspace did not take is
   * kept, and the safety alarm retries it; news it took is not sent again.
   */
  private async syncCatalog(onlyIfNewer = false): Promise<void> {
    if (!this.state) return;
    const takenAt = Date.now();
    const summary = summarize(this.state, this.log.durableSeq, this.updatedAt);
    const shown = JSON.stringify(summary);
    // The safety alarm of a thread whose last push landed has nothing to do: threads busy
    // together set their alarms together, and would otherwise all push at once.
    if (onlyIfNewer && shown === this.pushed && this.news.length === 0) {
      this.pushRetryAt = null;
      this.pushedUpTo(summary.lastSeq, takenAt);
      return;
    }
    const news = this.news.splice(0);
    const fed = workspaceOf(this.env, this.state.spec.workspace)
      .threadChanged(summary, news)
      .then(() => true)
      .catch(async (err: unknown) => {
        this.news.unshift(...news);
        console.error(`thread ${summary.id}: the workspace feed missed a change, retrying: ${(err as Error).message}`);
        await this.retryPush();
        return false;
      });
    this.ctx.waitUntil(fed);
    await catalogOf(this.env).upsert(summary);
    this.pushedUpTo(summary.lastSeq, takenAt);
    this.ctx.waitUntil(
      fed.then((took) => {
        if (!took) return;
        this.pushed = shown;
        this.pushRetryAt = null;
      }),
    );
  }
}
