import { DurableObject } from "cloudflare:workers";
import type { CompactionMode, CompactionStatus, CompactResult } from "../src/api/compaction.js";
import type { AttachmentEntry } from "../src/api/attachments.js";
import type { OperationAccepted, OperationKind, ReportOperation } from "../src/api/operations.js";
import type { Handoff, HandoffContext, HandoffList, HandoffOffered, ReplaceResult, Seat, SeatList } from "../src/api/seats.js";
import type { ApprovalDecision, Json, QuestionAction, TranscriptEntry } from "../src/api/engine.js";
import type { CycleBody, EventBodies, EventKind, MemoryRetainedBody } from "../src/api/events.js";
import type { MessageAccepted, PatchMessage, PostMessage, ThreadHead, ThreadRow, ThreadSpec } from "../src/api/threads.js";
import type { ApprovalResolved, LoopState, QuestionStatus, SendResult, SteeringEntry, TurnResult, TurnStatus } from "../src/api/turns.js";
import { readConfig, type RuntimeConfig } from "../src/platform/config.js";
import type { Env } from "../src/platform/env.js";
import { BlobStore, blobSaveRefusal } from "./thread/log/blob-store.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { AlarmSchedule } from "./lib/alarm-schedule.js";
import { DeltaHub } from "./thread/log/delta-hub.js";
import { EventLog, type PreparedEvent } from "./thread/log/event-log.js";
import { ok, type Outcome } from "../src/api/outcome.js";
import { missing } from "./thread/refusals.js";
import { headOf, loadState, toRow, type ThreadState } from "./thread/thread-state.js";
import type { Accepted, ThreadAccess } from "./thread/thread-access.js";
import type { GateRequest, GateResult } from "../src/api/cycles.js";
import type { Subscription, WakeFilter, WakeItem, WatchTarget } from "../src/api/subscriptions.js";
import type { SeatTarget } from "./thread/orchestration/seats.js";
import { TurnTables } from "./thread/turn/tables.js";
import type { ToolTurn } from "../src/api/tools.js";
import { CatalogSync } from "./thread/catalog-sync.js";
import type { TailQuery } from "./thread/log/readers.js";
import type { AguiPage } from "../src/api/agui.js";
import { buildParts, installTables, type ThreadParts } from "./thread/parts.js";
import { steeringEntries } from "./thread/turn/steering.js";
import type { GeneratedInterface, InterfaceSource } from "../src/api/ui.js";

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
  private readonly deltas: DeltaHub;
  private state: ThreadState | null;
  private updatedAt: string;
  /** The object's one alarm, which every timed part reports to. */
  private readonly alarms: AlarmSchedule;
  private readonly commits: CommitQueue;
  /** Events of the batch being committed: readers see them once the batch is durable. */
  private unpublished: Accepted[] = [];
  private readonly tables: TurnTables;
  /** A commit of this batch matched a watcher: its delivery follows the batch to disk. */
  private matched = false;
  /** The summary's push to the catalog and the workspace's feed. */
  private readonly catalog: CatalogSync;
  /** Everything else it does, each part seeing only its slice of the Thread (thread/parts.ts). */
  private readonly parts: ThreadParts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = readConfig(env);
    this.sql = ctx.storage.sql;
    installTables(this.sql);
    this.commits = new CommitQueue(ctx.storage, (durable) => this.publish(durable), () => this.rolledBack());
    this.blobs = new BlobStore(env.BLOBS, this.config.faults.has("blob-put"));
    this.log = new EventLog(this.sql, this.blobs, this.config.blobThreshold);
    this.tables = new TurnTables(this.sql);
    this.deltas = new DeltaHub(this.config.streamSubscribers, this.config.streamBuffer, this.config.heartbeatMs);
    const saved = this.sql.exec<{ state: string }>("SELECT state FROM thread").toArray()[0];
    this.state = saved ? loadState(saved.state) : null;
    this.updatedAt = this.log.get(this.log.lastSeq)?.ts ?? this.state?.createdAt ?? "";
    this.catalog = new CatalogSync({
      env,
      config: this.config,
      log: this.log,
      state: () => this.state,
      updatedAt: () => this.updatedAt,
      reschedule: () => this.reschedule(),
      settled: () => this.alarms.clearIfIdle().catch((err: unknown) => console.error(`thread ${this.state?.id}: its spent alarm could not be deleted: ${(err as Error).message}`)),
      waitUntil: (work) => ctx.waitUntil(work),
    });
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
      change: (kind, body, refusal, apply, news) => this.parts.lifecycle.change(kind, body, refusal, apply, news),
      syncCatalogNow: () => this.catalog.now(),
      reschedule: () => this.reschedule(),
      abort: (reason) => ctx.abort(reason),
    };
    this.parts = buildParts(access, {
      adopt: (state) => void (this.state = state),
      appendAt: (prepared, now) => this.append(prepared, now),
      row: () => this.row(this.state!),
      tell: (news) => this.catalog.tell(news),
    });
    this.alarms = new AlarmSchedule(ctx.storage);
    for (const part of this.parts.timed) this.alarms.add(part);
    this.alarms.add(this.catalog.alarm);
    // A fresh instance runs no turn: a turn still marked running was lost with the
    // instance (or the host) that ran it. Record that before anything else is served.
    if (this.state?.turn) void ctx.blockConcurrencyWhile(() => this.parts.driver.loseTurn());
    // Matches the last instance did not deliver go now.
    if (this.state && this.parts.watchers.pending()) this.parts.watchers.schedule(0);
    // What came due while no instance ran, or was changed by one that stopped before it set the alarm.
    if (this.state) void this.reschedule();
  }

  // ---- creation and rows ----

  /** `fork.transcript` is JSON text (`TranscriptEntry[]`): RPC types cannot express any-JSON tool inputs. */
  init(id: string, spec: ThreadSpec, forkOf?: { parent: string; atSeq: number; transcript: string }, delegatedBy?: { parent: string; operation: string }): Promise<Outcome<ThreadRow>> {
    const fork = forkOf ? { ...forkOf, transcript: JSON.parse(forkOf.transcript) as TranscriptEntry[] } : undefined;
    return this.parts.lifecycle.create(id, spec, fork, delegatedBy);
  }

  get(): Outcome<ThreadRow> {
    return this.state ? ok(this.row(this.state)) : missing();
  }

  head(): Outcome<ThreadHead> {
    return this.state ? ok(headOf(this.state)) : missing();
  }

  // ---- messages ----

  /** `clientMessageId`: only the AG-UI route sets it (`PostMessage` refuses the key from a caller). */
  postMessage(message: PostMessage & { clientMessageId?: string }, idempotencyKey?: string): Promise<Outcome<MessageAccepted & { replayed?: true }>> {
    return this.parts.inbox.accept(message, idempotencyKey);
  }

  /** The thread's attachments, oldest first, with where the engines find each. */
  attachments(): Outcome<{ attachments: AttachmentEntry[] }> {
    return this.parts.inbox.attachments();
  }

  /** One attachment's bytes and media type, by its hash; only an attachment of this thread. */
  attachment(sha256: string): Promise<Outcome<{ mediaType: string; name: string; bytes: Uint8Array }>> {
    return this.parts.inbox.attachment(sha256);
  }

  editHeld(seq: number, patch: PatchMessage): Promise<Outcome<MessageAccepted>> {
    return this.parts.inbox.editHeld(seq, patch);
  }

  deleteHeld(seq: number): Promise<Outcome<MessageAccepted>> {
    return this.parts.inbox.deleteHeld(seq);
  }

  /** Appends an event on behalf of an engine or a flow (tool results, cycle events). */
  record<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<MessageAccepted>> {
    return this.parts.inbox.record(kind, body);
  }

  // ---- retire, restore, lease ----

  /** Retires the thread; a retired head gives its workspace's head slot up. */
  archive(reason: string | null): Promise<Outcome<MessageAccepted>> {
    return this.parts.lifecycle.archive(reason);
  }

  /** Restores a retired thread; a head needs its workspace's head slot back (409 if taken meanwhile). */
  restore(): Promise<Outcome<MessageAccepted>> {
    return this.parts.lifecycle.restore();
  }

  /** Retires a head to `chat` (the only role change there is), freeing the head slot. */
  retireHead(): Promise<Outcome<MessageAccepted>> {
    return this.parts.lifecycle.retireHead();
  }

  setSeatLease(seatLease: string | null): Promise<Outcome<MessageAccepted>> {
    return this.parts.lifecycle.setSeatLease(seatLease);
  }

  // ---- reading ----

  /** A page of the log, already serialized as the JSON the route answers with. */
  page(q: TailQuery): Promise<Outcome<string>> {
    return this.parts.readers.page(q);
  }

  /** The whole body of one tool result, as JSON text. */
  aguiPage(before: number | undefined, limit: number): Promise<Outcome<AguiPage>> {
    return this.parts.readers.aguiPage(before, limit);
  }

  toolResult(seq: number): Promise<Outcome<string>> {
    return this.parts.readers.toolResult(seq);
  }

  /**
   * The SSE routes come in over fetch, not RPC: a Response the router returns as it is
   * is proxied by workerd natively, while a stream returned over RPC costs a JS hop per
   * chunk on the router's side, per follower, per event. Paths: /follow?after=N, /stream.
   */
  override fetch(request: Request): Promise<Response> {
    return this.parts.readers.serve(request);
  }

  /** Live deltas from an engine: sent to `stream` subscribers, never stored. */
  publishDeltas(frames: unknown[]): void {
    this.deltas.publish(frames);
  }

  subscriberCounts(): { follow: number; stream: number; agui: number } {
    return this.parts.readers.counts();
  }

  // ---- turns ----

  /** Posts a message and waits for the turn that answers it (`POST /threads/:id/send`). */
  send(message: PostMessage): Promise<Outcome<SendResult>> {
    return this.parts.inbox.send(message);
  }

  turnStatus(): Outcome<TurnStatus> {
    return this.parts.driver.turnStatus();
  }

  interrupt(): Promise<Outcome<TurnResult>> {
    return this.parts.driver.interrupt();
  }

  /** Frees this thread's session for the live-session cap (see TurnDriver.evict). */
  evict(why: string, idleMs: number): Promise<Outcome<TurnResult>> {
    return this.parts.driver.evict(why, idleMs);
  }

  resolveApproval(approvalId: string, decision: ApprovalDecision): Promise<Outcome<ApprovalResolved>> {
    return this.parts.waits.resolveApproval(approvalId, decision);
  }

  /** The approvals and questions AG-UI `resume` entries name, open or closed. */
  waitsNamed(ids: string[]): Outcome<{ id: string; kind: "approval" | "question"; open: boolean }[]> {
    if (!this.state) return missing();
    return ok(this.tables.waitsNamed(ids).map((w) => ({ id: w.id, kind: w.kind, open: w.status === "open" })));
  }

  question(requestId: string): Outcome<QuestionStatus> {
    return this.parts.waits.question(requestId);
  }

  resolveQuestion(requestId: string, action: QuestionAction, answer?: string): Promise<Outcome<QuestionStatus>> {
    return this.parts.waits.resolveQuestion(requestId, action, answer);
  }

  recover(reason: string): Promise<Outcome<MessageAccepted>> {
    return this.parts.driver.recover(reason);
  }

  forkSource(atSeq: number): Outcome<{ spec: ThreadSpec; transcript: string }> {
    return this.parts.driver.forkSource(atSeq);
  }

  reconcile(): Promise<{ running: boolean }> {
    return this.parts.driver.reconcile();
  }

  // ---- cycle events, gates, merges ----

  /** `data` is JSON text: RPC types cannot express any JSON. */
  async cycleEvent(event: Omit<CycleBody, "data">, data?: string): Promise<Outcome<MessageAccepted>> {
    return this.record("cycle", { ...event, ...(data !== undefined ? { data: JSON.parse(data) as Json } : {}) });
  }

  gate(request: GateRequest): Promise<Outcome<GateResult>> {
    return this.parts.gates.ask(request);
  }

  // ---- subscriptions: what this thread watches, and who watches it ----

  subscriptionList(): Outcome<{ subscriptions: Subscription[] }> {
    return this.parts.subscriptions.list();
  }

  subscribe(target: WatchTarget, filter: WakeFilter, note: string | null, deliver: { seat: string } | null): Promise<Outcome<Subscription>> {
    return this.parts.subscriptions.add(target, filter, note, deliver);
  }

  unsubscribe(watch: string): Promise<Outcome<Subscription>> {
    return this.parts.subscriptions.remove(watch);
  }

  /** A watched thread hands over its matching events. */
  wake(watch: string, source: string, items: WakeItem[]): Promise<Outcome<{ taken: number }>> {
    return this.parts.subscriptions.wake(watch, source, items);
  }

  /** `filter` is JSON text (`WakeFilter`). */
  addWatcher(watch: string, subscriber: string, filter: string): Promise<Outcome<true>> {
    return this.parts.watchers.watchedBy(watch, subscriber, JSON.parse(filter) as WakeFilter);
  }

  removeWatcher(watch: string): Promise<Outcome<true>> {
    return this.parts.watchers.unwatchedBy(watch);
  }

  // ---- operations ----

  // Operations carry any JSON (detail, data, result), which RPC types cannot express: they cross as JSON text.

  operations(): Outcome<string> {
    const list = this.parts.operations.list();
    return list.ok ? ok(JSON.stringify(list.value)) : list;
  }

  operation(id: string): Outcome<string> {
    const one = this.parts.operations.get(id);
    return one.ok ? ok(JSON.stringify(one.value)) : one;
  }

  /** The answer an Idempotency-Key already got, before a delegation spawns a second child for it. */
  operationReplay(key: string, request: string): Promise<Outcome<OperationAccepted> | null> {
    return this.parts.operations.replay(key, JSON.parse(request) as unknown);
  }

  /** `detail` is JSON text; `request` is what an Idempotency-Key is checked against (the route's whole body, as JSON text). */
  startOperation(
    body: { operation?: string; kind: OperationKind; title: string; child?: string; prompt?: string; detail?: string },
    idempotency?: { key: string; request: string },
  ): Promise<Outcome<OperationAccepted>> {
    const { detail, ...rest } = body;
    return this.parts.operations.start(
      { ...rest, ...(detail !== undefined ? { detail: JSON.parse(detail) as Record<string, Json> } : {}) },
      idempotency ? { key: idempotency.key, request: JSON.parse(idempotency.request) as unknown } : undefined,
    );
  }

  /** `report` is JSON text (`ReportOperation`): RPC types cannot express its any-JSON result. */
  reportOperation(id: string, report: string, by: "caller" | "child", idempotencyKey?: string): Promise<Outcome<OperationAccepted>> {
    return this.parts.operations.report(id, JSON.parse(report) as ReportOperation, by, idempotencyKey);
  }

  // ---- seats and handoffs ----

  /** Every message sent to steer a running turn, oldest first, and what became of it. */
  steering(): Outcome<{ steering: SteeringEntry[] }> {
    return this.state ? ok({ steering: steeringEntries(this.tables) }) : missing();
  }

  seatList(): Outcome<SeatList> {
    return this.parts.seats.list();
  }

  joinSeat(name: string, target: SeatTarget, role: string | null): Promise<Outcome<Seat>> {
    return this.parts.seats.join(name, target, role);
  }

  replaceSeat(name: string, target: SeatTarget): Promise<Outcome<ReplaceResult>> {
    return this.parts.seats.replace(name, target);
  }

  removeSeat(name: string): Promise<Outcome<{ seat: Seat; holder: string; seq: number; ts: string }>> {
    return this.parts.seats.remove(name);
  }

  handoffList(): Outcome<HandoffList> {
    return this.parts.handoffs.list();
  }

  offerHandoff(to: string, note: string | null, context: HandoffContext): Promise<Outcome<HandoffOffered>> {
    return this.parts.handoffs.offer(to, note, context, "caller");
  }

  acceptHandoff(fromSeq: number): Promise<Outcome<Handoff>> {
    return this.parts.handoffs.accept(fromSeq);
  }

  declineHandoff(fromSeq: number): Promise<Outcome<Handoff>> {
    return this.parts.handoffs.decline(fromSeq);
  }

  // ---- memory this thread recorded (docs/memory.md) ----

  /** A retain that named this thread, recorded in its log; a retired thread records it too, as what happened. */
  noteMemory(body: MemoryRetainedBody): Promise<Outcome<MessageAccepted>> {
    return this.record("memory-retained", body);
  }

  // ---- generated interfaces (docs/ui.md) ----

  /** Builds an interface for the thread (the template's, or the model's) and records it as an `interface` event. */
  generateInterface(source: InterfaceSource | undefined): Promise<Outcome<GeneratedInterface>> {
    return this.parts.interfaces.generate(source);
  }

  // ---- the runtime's tools, as a running turn calls them (docs/tools.md) ----

  toolTurn(turnId: string): Outcome<ToolTurn> {
    return this.parts.tools.turn(turnId);
  }

  offerHandoffFromTurn(turnId: string, to: string, note: string | null, context: HandoffContext): Promise<Outcome<HandoffOffered>> | Outcome<never> {
    return this.parts.tools.offer(turnId, to, note, context);
  }

  /** `report` is a `ReportOperation` as JSON text (RPC cannot type its any-JSON result). */
  reportToDelegator(turnId: string, report: string): Promise<Outcome<{ operation: string; parent: string }>> {
    return this.parts.tools.report(turnId, JSON.parse(report) as ReportOperation);
  }

  // ---- the context window ----

  compactionStatus(): Outcome<CompactionStatus> {
    return this.parts.compaction.status();
  }

  compact(mode: CompactionMode | undefined): Promise<Outcome<CompactResult>> {
    return this.parts.compaction.compact(mode);
  }

  // ---- loops ----

  loopState(): Outcome<{ loop: LoopState | null }> {
    return this.parts.loops.loopState();
  }

  startLoop(prompt: string, maxTurns: number | undefined, until: string | undefined): Promise<Outcome<LoopState>> {
    return this.parts.loops.startLoop(prompt, maxTurns, until);
  }

  continueLoop(more: number | undefined): Promise<Outcome<LoopState>> {
    return this.parts.loops.continueLoop(more);
  }

  stopLoop(): Promise<Outcome<LoopState>> {
    return this.parts.loops.stopLoop();
  }

  // ---- the alarm ----

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
    if (this.parts.watchers.match(event, prepared, () => this.wakeDepth(event, prepared))) this.matched = true;
    this.catalog.schedule();
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
      this.parts.watchers.schedule();
      void this.reschedule();
    }
    this.matched = false;
    if (!this.parts.readers.settle(events, durable)) return;
    if (events.length > 0) this.updatedAt = events[events.length - 1]!.ts;
    this.parts.readers.wakeTails();
  }

  private async prepareOrRefuse<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<PreparedEvent>> {
    try {
      return ok(await this.log.prepare(kind, body));
    } catch (err) {
      return blobSaveRefusal(err, "a large body");
    }
  }

  private row(s: ThreadState): ThreadRow {
    const held = this.sql.exec<{ seq: number }>("SELECT seq FROM held ORDER BY seq").toArray().map((r) => r.seq);
    return toRow(s, this.log.durableSeq, this.updatedAt, held);
  }

  private saveState(): void {
    this.sql.exec("INSERT OR REPLACE INTO thread (one, state) VALUES (1, ?)", JSON.stringify(this.state));
  }
}
