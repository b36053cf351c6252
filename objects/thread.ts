import { DurableObject } from "cloudflare:workers";
import type { ApprovalDecision, Json, QuestionAction, TranscriptEntry, TurnFailure, TurnRequest } from "../src/api/engine.js";
import { CODES } from "../src/api/errors.js";
import type { EventBodies, EventKind } from "../src/api/events.js";
import type { MessageAccepted, PatchMessage, PostMessage, ThreadHead, ThreadRow, ThreadSpec } from "../src/api/threads.js";
import {
  LOOP_DEFAULT_TURNS,
  type ApprovalResolved,
  type LoopState,
  type QuestionStatus,
  type SendResult,
  type TurnStatus,
} from "../src/api/turns.js";
import { readConfig, type RuntimeConfig } from "../src/config.js";
import { catalogOf, hostOf, workspaceOf, type Env } from "../src/env.js";
import { BlobSaveError, BlobStore, sha256Hex } from "./lib/blob-store.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { DeltaHub } from "./lib/delta-hub.js";
import { EventLog, LOG_SCHEMA, type PreparedEvent, type SerializedEvent } from "./lib/event-log.js";
import { FollowHub } from "./lib/follow-hub.js";
import { SSE_HEADERS } from "./lib/sse.js";
import { ok, refuse, type Outcome } from "./lib/outcome.js";
import { loadState, STATE_SCHEMA, summarize, toRow, type ThreadState } from "./lib/thread-state.js";
import { TurnRunner, type TurnEnd } from "./lib/turn-runner.js";
import { TURN_SCHEMA, TurnStore, type Wait } from "./lib/turn-store.js";

type Accepted = SerializedEvent & { ts: string };

interface Prepared {
  wait: Wait;
  event: PreparedEvent;
}

interface LoopStep {
  loop: LoopState;
  event: PreparedEvent | null;
  again: PreparedEvent | null;
}

/** How far out the catalog's safety alarm is set, and so how often at most. */
const SAFETY_ALARM_MS = 60_000;
/**
 * While a turn runs, an alarm fires this often. An object with no incoming requests may
 * be evicted after about a minute even while it waits on the engine (a person may take
 * long to approve); the alarm counts as activity and keeps the turn's stream alive.
 */
const KEEPALIVE_MS = 30_000;

export const LOST_TURN_TEXT = "This turn was lost to a host restart";

/** A turn this object instance is running: the engine's report stream and what /send waits for. */
interface LiveTurn {
  id: string;
  index: number;
  inputs: number[];
  runner: TurnRunner;
  lastReply: { seq: number; text: string } | null;
  done: Promise<TurnEnd>;
}

interface TurnResult {
  turnId: string;
  outcome: "completed" | "failed";
  failure: TurnFailure | null;
  reply: { seq: number; text: string } | null;
}

function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return prefix + [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

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
  private readonly followers: FollowHub;
  private readonly deltas: DeltaHub;
  private state: ThreadState | null;
  private updatedAt: string;
  /** The in-memory timer that pushes activity to the catalog; at most one at a time. */
  private activityTimer: ReturnType<typeof setTimeout> | null = null;
  /** When the safety alarm was last set (memory only: one per minute at most). */
  private safetyAlarmSetAt = 0;
  private readonly waiters = new Set<() => void>();
  private readonly commits: CommitQueue;
  /** Events of the batch being committed: readers see them once the batch is durable. */
  private unpublished: Accepted[] = [];
  private readonly turns: TurnStore;
  private live: LiveTurn | null = null;
  /** Set while a turn is being started, so two messages cannot start two turns. */
  private starting = false;
  /** `/send` callers, by the seq of their message, until a turn answers it. */
  private readonly sendWaiters = new Map<number, (r: TurnResult) => void>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = readConfig(env);
    this.sql = ctx.storage.sql;
    this.sql.exec(LOG_SCHEMA + STATE_SCHEMA + TURN_SCHEMA);
    this.commits = new CommitQueue(ctx.storage, (durable) => this.publish(durable));
    this.log = new EventLog(this.sql, new BlobStore(env.BLOBS, this.config.faults.has("blob-put")), this.config.blobThreshold);
    this.turns = new TurnStore(this.sql);
    this.followers = new FollowHub(this.log, this.config.heartbeatMs);
    this.deltas = new DeltaHub(this.config.streamSubscribers, this.config.streamBuffer, this.config.heartbeatMs);
    const saved = this.sql.exec<{ state: string }>("SELECT state FROM thread").toArray()[0];
    this.state = saved ? loadState(saved.state) : null;
    const last = this.log.get(this.log.lastSeq);
    this.updatedAt = last?.ts ?? this.state?.createdAt ?? "";
    // A fresh instance runs no turn: a turn still marked running was lost with the
    // instance (or the host) that ran it. Record that before anything else is served.
    if (this.state?.turn) void ctx.blockConcurrencyWhile(() => this.loseTurn());
  }

  // ---- creation and rows ----

  /** `fork.transcript` is JSON text (`TranscriptEntry[]`): RPC types cannot express any-JSON tool inputs. */
  async init(id: string, spec: ThreadSpec, forkOf?: { parent: string; atSeq: number; transcript: string }): Promise<Outcome<ThreadRow>> {
    const fork = forkOf ? { ...forkOf, transcript: JSON.parse(forkOf.transcript) as TranscriptEntry[] } : undefined;
    const prepared = await this.prepareOrRefuse("spawn", { spec });
    if (!prepared.ok) return prepared;
    const forked = fork ? await this.prepareOrRefuse("fork", fork) : null;
    if (forked && !forked.ok) return forked;
    const outcome = await this.commits.write((): Outcome<true> => {
      if (this.state) return refuse(409, `thread ${id} already exists`);
      const now = new Date();
      this.state = {
        id,
        spec,
        parent: fork?.parent ?? null,
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
      };
      this.saveState();
      this.append(prepared.value, now);
      if (forked) {
        const e = this.append(forked.value, now);
        for (const entry of fork!.transcript) this.turns.addEntry(e.seq, entry);
      }
      return ok(true);
    });
    if (!outcome.ok) return outcome;
    await this.syncCatalogNow();
    return ok(this.row(this.state!));
  }

  get(): Outcome<ThreadRow> {
    const s = this.state;
    return s ? ok(this.row(s)) : this.missing();
  }

  head(): Outcome<ThreadHead> {
    const s = this.state;
    if (!s) return this.missing();
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

  async postMessage(message: PostMessage, idempotencyKey?: string): Promise<Outcome<MessageAccepted & { replayed?: true }>> {
    if (!this.state) return this.missing();
    const digest = idempotencyKey ? await sha256Hex(new TextEncoder().encode(JSON.stringify(message))) : null;
    const body = { text: message.text, ...(message.from ? { from: message.from } : {}), ...(message.hold ? { hold: true } : {}) };
    const prepared = await this.prepareOrRefuse("message", body);
    if (!prepared.ok) return prepared;
    const outcome = await this.commits.write((): Outcome<MessageAccepted & { replayed?: true }> => {
      if (this.state!.archivedAt) return this.archivedRefusal();
      if (this.state!.degraded) return this.degradedRefusal();
      if (idempotencyKey) {
        const seen = this.sql
          .exec<{ digest: string; seq: number; ts: string }>("SELECT digest, seq, ts FROM idempotency WHERE key = ?", idempotencyKey)
          .toArray()[0];
        if (seen && seen.digest !== digest)
          return refuse(409, "this Idempotency-Key was used for a different message", CODES.idempotencyConflict, { seq: seen.seq });
        if (seen) return ok({ seq: seen.seq, ts: seen.ts, replayed: true });
      }
      const event = this.append(prepared.value);
      if (message.hold) this.sql.exec("INSERT INTO held (seq, text) VALUES (?, ?)", event.seq, message.text);
      else this.turns.queue(event.seq, message.text, message.from);
      if (idempotencyKey)
        this.sql.exec("INSERT INTO idempotency (key, digest, seq, ts) VALUES (?, ?, ?, ?)", idempotencyKey, digest, event.seq, event.ts);
      return ok({ seq: event.seq, ts: event.ts });
    });
    if (outcome.ok && !message.hold) this.kick();
    return outcome;
  }

  async editHeld(seq: number, patch: PatchMessage): Promise<Outcome<MessageAccepted>> {
    const held = this.heldOrRefusal(seq);
    if (!held.ok) return held;
    const edit = patch.text !== undefined ? await this.prepareOrRefuse("message-edited", { target: seq, text: patch.text }) : null;
    if (edit && !edit.ok) return edit;
    const release = patch.hold === false ? await this.prepareOrRefuse("message-released", { target: seq }) : null;
    if (release && !release.ok) return release;
    const outcome = await this.commits.write((): Outcome<MessageAccepted> => {
      const still = this.heldOrRefusal(seq);
      if (!still.ok) return still;
      if (release && this.state!.degraded) return this.degradedRefusal();
      let last: Accepted | null = null;
      if (edit) {
        last = this.append(edit.value);
        this.sql.exec("UPDATE held SET text = ? WHERE seq = ?", patch.text!, seq);
      }
      if (release) {
        last = this.append(release.value);
        const text = this.sql.exec<{ text: string }>("SELECT text FROM held WHERE seq = ?", seq).one().text;
        this.turns.queue(seq, text);
        this.sql.exec("DELETE FROM held WHERE seq = ?", seq);
      }
      return ok({ seq: last!.seq, ts: last!.ts });
    });
    if (outcome.ok && release) this.kick();
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
    if (!this.state) return this.missing();
    const prepared = await this.prepareOrRefuse(kind, body);
    if (!prepared.ok) return prepared;
    return this.commits.write(() => {
      const e = this.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts });
    });
  }

  // ---- retire, restore, lease ----

  async archive(reason: string | null): Promise<Outcome<MessageAccepted>> {
    const retired = (s: ThreadState) => (s.archivedAt ? this.archivedRefusal() : null);
    return this.change("archive", { reason }, retired, (s, e) => {
      s.archivedAt = e.ts;
      s.archiveReason = reason;
    });
  }

  async restore(): Promise<Outcome<MessageAccepted>> {
    const live = (s: ThreadState) => (s.archivedAt ? null : refuse(409, `thread ${s.id} is not retired`, CODES.threadNotArchived));
    return this.change("restore", {}, live, (s) => {
      s.archivedAt = null;
      s.archiveReason = null;
    });
  }

  async setSeatLease(seatLease: string | null): Promise<Outcome<MessageAccepted>> {
    return this.change("seat-lease", { seatLease }, () => null, (s) => {
      s.seatLease = seatLease;
    });
  }

  /**
   * A change to the thread's row, recorded as an event. `refusal` is asked before and
   * again inside the commit (the awaits between can change the answer); the catalog
   * learns of the change at once.
   */
  private async change<K extends EventKind>(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState, event: Accepted) => void,
  ): Promise<Outcome<MessageAccepted>> {
    if (!this.state) return this.missing();
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
    if (outcome.ok) await this.syncCatalogNow();
    return outcome;
  }

  // ---- reading ----

  /** A page of the log, already serialized as the JSON the route answers with. */
  async page(q: TailQuery): Promise<Outcome<string>> {
    if (!this.state) return this.missing();
    if (q.before !== undefined) {
      const rows = this.log.backward(q.before, q.limit);
      const events = await this.log.serialize(rows);
      const oldest = rows[rows.length - 1]?.seq;
      const hasMore = oldest !== undefined && oldest > 1;
      const prevBefore = oldest === undefined ? null : String(oldest);
      return ok(`{"events":[${events.map((e) => e.json).join(",")}],"prevBefore":${JSON.stringify(prevBefore)},"hasMore":${hasMore}}`);
    }
    const after = q.after ?? 0;
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    if (q.waitMs > 0 && after >= this.log.durableSeq) await this.waitForAppend(q.waitMs);
    const rows = this.log.forward(after, q.limit);
    const events = await this.log.serialize(rows);
    const nextAfter = rows.length ? rows[rows.length - 1]!.seq : after;
    const hasMore = nextAfter < this.log.durableSeq;
    return ok(`{"events":[${events.map((e) => e.json).join(",")}],"nextAfter":"${nextAfter}","hasMore":${hasMore}}`);
  }

  /** The whole body of one tool result, as JSON text. */
  async toolResult(seq: number): Promise<Outcome<string>> {
    if (!this.state) return this.missing();
    const row = this.log.get(seq);
    if (!row) return refuse(404, `thread has no event ${seq}`, CODES.eventNotFound);
    if (row.kind !== "tool-result") return refuse(404, `event ${seq} is a ${row.kind}, not a tool result`, CODES.notAToolResult);
    return ok(await this.log.body(row));
  }

  private follow(after: number): Outcome<ReadableStream<Uint8Array>> {
    if (!this.state) return this.missing();
    const beyond = this.beyondEnd(after);
    if (beyond) return beyond;
    return ok(this.followers.open(after));
  }

  private stream(): Outcome<ReadableStream<Uint8Array>> {
    if (!this.state) return this.missing();
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
      url.pathname === "/follow" ? this.follow(Number(url.searchParams.get("after"))) : url.pathname === "/stream" ? this.stream() : null;
    if (!outcome) return Response.json({ error: `no object route ${url.pathname}` }, { status: 404 });
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
    const accepted = await this.postMessage(message);
    if (!accepted.ok) return accepted;
    const { seq, ts } = accepted.value;
    const result = await new Promise<TurnResult>((resolve) => this.sendWaiters.set(seq, resolve));
    return ok({ seq, ts, ...result });
  }

  turnStatus(): Outcome<TurnStatus> {
    const s = this.state;
    if (!s) return this.missing();
    const waits = s.turn ? this.turns.openWaits(s.turn.id) : [];
    return ok({
      running: s.turn !== null,
      turn: s.turn ? { turnId: s.turn.id, index: s.turn.index, startedAt: s.turn.startedAt, inputs: s.turn.inputs } : null,
      waitingOn: {
        approvals: waits.filter((w) => w.kind === "approval").map((w) => w.id),
        questions: waits.filter((w) => w.kind === "question").map((w) => w.id),
      },
      queued: this.turns.queued(),
    });
  }

  /**
   * Asks the engine to stop the running turn and waits for the turn to end. An engine
   * that does not stop within the grace time has its report stream cut: the turn ends
   * here either way, with class `interrupted`.
   */
  async interrupt(): Promise<Outcome<TurnResult>> {
    if (!this.state) return this.missing();
    const live = this.live;
    if (!this.state.turn || !live) return refuse(409, "no turn is running on this thread", CODES.noTurnRunning);
    const timer = setTimeout(
      () => live.runner.cancel({ class: "interrupted", error: "interrupted (the engine did not stop in time; the turn was cut)" }),
      this.config.interruptGraceMs,
    );
    void this.engine(`/turns/${live.id}/interrupt`, {}).catch(() =>
      live.runner.cancel({ class: "interrupted", error: "interrupted (the engine could not be reached; the turn was cut)" }),
    );
    const end = await live.done;
    clearTimeout(timer);
    return ok({ turnId: live.id, outcome: end.outcome, failure: end.failure ?? null, reply: live.lastReply });
  }

  async resolveApproval(approvalId: string, decision: ApprovalDecision): Promise<Outcome<ApprovalResolved>> {
    if (!this.state) return this.missing();
    const found = this.openWaitOrRefusal(approvalId, "approval");
    if (!found.ok) return found;
    const prepared = await this.prepareOrRefuse("approval-resolved", { approvalId, decision });
    if (!prepared.ok) return prepared;
    const outcome = await this.commits.write((): Outcome<ApprovalResolved & { turnId: string }> => {
      const still = this.openWaitOrRefusal(approvalId, "approval");
      if (!still.ok) return still;
      const e = this.append(prepared.value);
      this.turns.closeWait(approvalId, "resolved", { decision }, e.seq);
      this.restage();
      return ok({ approvalId, decision, seq: e.seq, turnId: still.value.turnId });
    });
    if (!outcome.ok) return outcome;
    await this.afterWaitClosed("approval", approvalId);
    await this.engine(`/turns/${outcome.value.turnId}/approvals/${approvalId}`, { decision }).catch((err: unknown) =>
      console.error(`approval ${approvalId}: the engine could not be told: ${(err as Error).message}`),
    );
    const { turnId: _turn, ...resolved } = outcome.value;
    return ok(resolved);
  }

  question(requestId: string): Outcome<QuestionStatus> {
    if (!this.state) return this.missing();
    const w = this.turns.wait(requestId, "question");
    if (!w) return refuse(404, `thread has no question ${requestId}`, CODES.questionNotFound);
    return ok(this.questionStatus(w));
  }

  async resolveQuestion(requestId: string, action: QuestionAction, answer?: string): Promise<Outcome<QuestionStatus>> {
    if (!this.state) return this.missing();
    const found = this.openWaitOrRefusal(requestId, "question");
    if (!found.ok) return found;
    const body = { requestId, action, ...(answer !== undefined ? { answer } : {}) };
    const prepared = await this.prepareOrRefuse("question-resolved", body);
    if (!prepared.ok) return prepared;
    const outcome = await this.commits.write((): Outcome<Wait> => {
      const still = this.openWaitOrRefusal(requestId, "question");
      if (!still.ok) return still;
      const e = this.append(prepared.value);
      this.turns.closeWait(requestId, "resolved", { action, ...(answer !== undefined ? { answer } : {}) }, e.seq);
      this.restage();
      return ok(this.turns.wait(requestId, "question")!);
    });
    if (!outcome.ok) return outcome;
    await this.afterWaitClosed("question", requestId);
    await this.engine(`/turns/${outcome.value.turnId}/questions/${requestId}`, { action, answer }).catch((err: unknown) =>
      console.error(`question ${requestId}: the engine could not be told: ${(err as Error).message}`),
    );
    return ok(this.questionStatus(outcome.value));
  }

  /** Reopens a degraded thread; the history that could not be saved stays missing. */
  async recover(reason: string): Promise<Outcome<MessageAccepted>> {
    const notDegraded = (s: ThreadState) => (s.degraded ? null : refuse(409, `thread ${s.id} is not degraded`, CODES.threadNotDegraded));
    const outcome = await this.change("recovered", { reason, acknowledgeHistoryGap: true }, notDegraded, (s) => {
      s.degraded = null;
      this.restage();
    });
    if (outcome.ok) this.kick();
    return outcome;
  }

  /** What a fork at `atSeq` continues from: the spec and the conversation up to there (JSON text). */
  forkSource(atSeq: number): Outcome<{ spec: ThreadSpec; transcript: string }> {
    if (!this.state) return this.missing();
    if (atSeq > this.log.durableSeq)
      return refuse(400, `atSeq ${atSeq} is beyond the thread's last event (${this.log.durableSeq})`, CODES.forkSeqOutOfRange);
    return ok({ spec: this.state.spec, transcript: JSON.stringify(this.turns.transcript(atSeq + 1)) });
  }

  // ---- loops ----

  loopState(): Outcome<{ loop: LoopState | null }> {
    return this.state ? ok({ loop: this.state.loop }) : this.missing();
  }

  async startLoop(prompt: string, maxTurns: number | undefined, until: string | undefined): Promise<Outcome<LoopState>> {
    const turns = maxTurns ?? LOOP_DEFAULT_TURNS;
    const running = (s: ThreadState) =>
      s.archivedAt
        ? this.archivedRefusal()
        : s.degraded
          ? this.degradedRefusal()
          : s.loop?.status === "running"
            ? refuse(409, "a loop is already running on this thread; stop it first", CODES.loopRunning)
            : null;
    return this.loopChange("loop-started", { prompt, maxTurns: turns, until: until ?? null }, running, (s) => {
      s.loop = { status: "running", prompt, maxTurns: turns, until: until ?? null, done: 0, reason: null };
    });
  }

  async continueLoop(more: number | undefined): Promise<Outcome<LoopState>> {
    const resumable = (s: ThreadState) =>
      !s.loop
        ? refuse(404, "thread has no loop", CODES.loopNotFound)
        : s.loop.status === "running"
          ? refuse(409, "the loop is running", CODES.loopRunning)
          : s.degraded
            ? this.degradedRefusal()
            : null;
    const turns = more ?? this.state?.loop?.maxTurns ?? LOOP_DEFAULT_TURNS;
    return this.loopChange("loop-continued", { turns }, resumable, (s) => {
      const loop = s.loop!;
      s.loop = { ...loop, status: "running", reason: null, maxTurns: loop.done + turns };
    });
  }

  async stopLoop(): Promise<Outcome<LoopState>> {
    if (!this.state) return this.missing();
    const running = (s: ThreadState) =>
      s.loop?.status === "running" ? null : refuse(409, "no loop is running on this thread", CODES.loopNotRunning);
    const outcome = await this.change("loop-stopped", { reason: "stopped" }, running, (s) => {
      s.loop = { ...s.loop!, status: "stopped", reason: "stopped" };
    });
    return outcome.ok ? ok(this.state.loop!) : outcome;
  }

  /** Starts or resumes a loop: the change, and the loop's prompt queued as its next message. */
  private async loopChange<K extends "loop-started" | "loop-continued">(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState) => void,
  ): Promise<Outcome<LoopState>> {
    if (!this.state) return this.missing();
    const early = refusal(this.state);
    if (early) return early;
    const prompt = kind === "loop-started" ? (body as EventBodies["loop-started"]).prompt : this.state.loop!.prompt;
    const change = await this.prepareOrRefuse(kind, body);
    if (!change.ok) return change;
    const message = await this.prepareOrRefuse("message", { text: prompt, from: "loop" });
    if (!message.ok) return message;
    const outcome = await this.commits.write((): Outcome<LoopState> => {
      const late = refusal(this.state!);
      if (late) return late;
      this.append(change.value);
      apply(this.state!);
      this.saveState();
      if (!this.state!.turn) this.queueLoopPrompt(message.value);
      return ok(this.state!.loop!);
    });
    if (outcome.ok) this.kick();
    return outcome;
  }

  /** Boot sweep: makes sure this thread is activated, which records a lost turn. */
  async reconcile(): Promise<{ running: boolean }> {
    if (!this.state?.turn) await hostOf(this.env).turnEnded(this.state?.id ?? "");
    return { running: this.state?.turn != null };
  }

  /** Starts the next turn if none runs and messages wait. Never throws: failures are recorded. */
  private kick(): void {
    if (this.starting || this.live || !this.state || this.state.turn || this.state.degraded) return;
    if (this.turns.queued() === 0) return;
    this.starting = true;
    void this.startTurn()
      .catch((err: unknown) => console.error(`thread ${this.state?.id}: a turn could not start:`, err))
      .finally(() => {
        this.starting = false;
      });
  }

  /** Starts a turn and returns once it runs; the turn ends on its own (finishTurn), which kicks the next. */
  private async startTurn(): Promise<void> {
    const s = this.state!;
    // Registered first: a crash after the turn is marked running must find it on boot.
    await hostOf(this.env).turnStarted(s.id);
    const turnId = randomId("turn_");
    const prepared = await this.prepareOrRefuse("turn-started", { turnId, index: s.turns + 1, inputs: [] });
    if (!prepared.ok) throw new Error(prepared.body.error);
    const started = await this.commits.write(() => {
      if (this.state!.turn || this.state!.degraded) return null;
      const inputs = this.turns.takeQueued();
      if (inputs.length === 0) return null;
      const transcript = this.turns.transcript();
      const body = { turnId, index: this.state!.turns + 1, inputs: inputs.map((i) => i.seq) };
      // The inputs are only known inside the commit; a list of seqs is never a large body.
      const e = this.append({ ...prepared.value, text: JSON.stringify(body) });
      for (const input of inputs) this.turns.addEntry(input.seq, { role: "user", text: input.text });
      this.state!.turns = body.index;
      this.state!.turn = { id: turnId, index: body.index, startedAt: e.ts, inputs: body.inputs };
      this.restage();
      return { inputs, transcript, index: body.index };
    });
    if (!started) {
      await hostOf(this.env).turnEnded(s.id);
      return;
    }
    void this.ctx.storage.setAlarm(Date.now() + KEEPALIVE_MS);
    void this.syncCatalogNow();
    const runner = new TurnRunner(turnId);
    let settle!: (end: TurnEnd) => void;
    const live: LiveTurn = {
      id: turnId,
      index: started.index,
      inputs: started.inputs.map((i) => i.seq),
      runner,
      lastReply: null,
      done: new Promise<TurnEnd>((resolve) => (settle = resolve)),
    };
    this.live = live;
    const request: TurnRequest = {
      turnId,
      threadId: s.id,
      engine: s.spec.engine,
      model: s.spec.model,
      permissions: s.spec.permissions,
      cwd: s.spec.cwd,
      account: s.spec.account,
      transcript: started.transcript,
      inputs: started.inputs,
    };
    void this.runTurn(live, request)
      .catch((err: unknown): TurnEnd => ({ outcome: "failed", failure: { class: "unknown", error: `the turn broke: ${(err as Error).message}` } }))
      .then(async (end) => {
        await this.finishTurn(live, end);
        settle(end);
      });
  }

  private async runTurn(live: LiveTurn, request: TurnRequest): Promise<TurnEnd> {
    let response: Response;
    try {
      response = await this.engine("/turns", request);
    } catch (err) {
      return { outcome: "failed", failure: { class: "unknown", error: `the engine host could not be reached: ${(err as Error).message}` } };
    }
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { error?: string; class?: TurnFailure["class"] };
      return {
        outcome: "failed",
        failure: { class: body.class ?? "unknown", error: body.error ?? `the engine host answered ${response.status}` },
      };
    }
    return live.runner.run(response, {
      delta: (frame) => this.deltas.publish([{ turnId: live.id, ...frame }]),
      durable: async (report) => {
        switch (report.type) {
          case "reply": {
            const e = await this.recordTurnEvent("reply", { turnId: live.id, text: report.text }, { role: "assistant", text: report.text });
            if (e) live.lastReply = { seq: e.seq, text: report.text };
            return;
          }
          case "tool-call":
            await this.recordTurnEvent(
              "tool-call",
              { turnId: live.id, callId: report.callId, name: report.name, input: report.input },
              { role: "tool-call", callId: report.callId, name: report.name, input: report.input },
            );
            return;
          case "tool-result":
            await this.recordTurnEvent(
              "tool-result",
              { turnId: live.id, callId: report.callId, name: report.name, output: report.output, isError: report.isError },
              { role: "tool-result", callId: report.callId, name: report.name, output: report.output, isError: report.isError },
            );
            return;
          case "approval":
            await this.openWait(live, "approval", report.approvalId, "approval-request", {
              turnId: live.id,
              approvalId: report.approvalId,
              callId: report.callId,
              name: report.name,
              input: report.input,
            });
            return;
          case "question":
            await this.openWait(live, "question", report.requestId, "question", {
              turnId: live.id,
              requestId: report.requestId,
              question: report.question,
            });
            return;
          case "usage": {
            const body = { turnId: live.id, model: report.model, inputTokens: report.inputTokens, outputTokens: report.outputTokens, usd: report.usd };
            const prepared = await this.prepareOrRefuse("usage", body);
            if (!prepared.ok) return;
            await this.commits.write(() => {
              this.append(prepared.value);
              const cost = this.state!.cost;
              cost.usd = Math.round((cost.usd + report.usd) * 1e9) / 1e9;
              cost.inputTokens += report.inputTokens;
              cost.outputTokens += report.outputTokens;
              this.saveState();
            });
            return;
          }
        }
      },
    });
  }

  /**
   * Records an event of the running turn and its transcript entry. A body that cannot
   * be saved (the blob store failed) is recorded without its content and marks the
   * thread degraded: the turn goes on, because the engine still holds the content, but
   * no later turn starts on a history with a hole in it until someone recovers it.
   */
  private async recordTurnEvent<K extends "reply" | "tool-call" | "tool-result">(
    kind: K,
    body: EventBodies[K],
    entry: TranscriptEntry,
  ): Promise<Accepted | null> {
    try {
      const prepared = await this.log.prepare(kind, body);
      return await this.commits.write(() => {
        const e = this.append(prepared);
        this.turns.addEntry(e.seq, entry);
        return e;
      });
    } catch (err) {
      if (!(err instanceof BlobSaveError)) throw err;
      const lost = `[this ${kind} could not be saved (${err.key}); the history has a gap here]`;
      const stub = { ...body, lost: err.key, ...(kind === "reply" ? { text: "" } : kind === "tool-result" ? { output: "" } : { input: null }) };
      const stubEntry: TranscriptEntry =
        entry.role === "tool-result" ? { ...entry, output: lost } : entry.role === "tool-call" ? { ...entry, input: {} } : { role: "assistant", text: lost };
      const ref = { key: err.key, index: this.state!.turn?.index ?? this.state!.turns, tag: kind };
      const event = await this.log.prepare(kind, stub as EventBodies[K]);
      const degraded = await this.log.prepare("degraded", { ...ref, error: err.message });
      const e = await this.commits.write(() => {
        const written = this.append(event);
        this.turns.addEntry(written.seq, stubEntry);
        this.append(degraded);
        // The first hole is the one named: the history is whole up to it.
        this.state!.degraded ??= ref;
        this.restage();
        return written;
      });
      void this.syncCatalogNow();
      return e;
    }
  }

  private async openWait<K extends "approval-request" | "question">(
    live: LiveTurn,
    kind: "approval" | "question",
    id: string,
    eventKind: K,
    body: EventBodies[K],
  ): Promise<void> {
    const prepared = await this.log.prepare(eventKind, body);
    const { turnId: _t, ...detail } = body as unknown as Record<string, unknown>;
    const e = await this.commits.write(() => {
      if (this.turns.wait(id, kind)) throw new Error(`the engine reused ${kind} id ${id}`);
      const written = this.append(prepared);
      this.turns.openWait({ id, kind, turnId: live.id, seq: written.seq, detail });
      this.restage();
      return written;
    });
    void this.syncCatalogNow();
    const ws = workspaceOf(this.env, this.state!.spec.workspace);
    const threadId = this.state!.id;
    const indexed =
      kind === "approval"
        ? ws.approvalOpened({
            approvalId: id,
            threadId,
            turnId: live.id,
            seq: e.seq,
            name: String(detail.name),
            input: detail.input as Json,
            openedAt: e.ts,
          })
        : ws.questionOpened({ requestId: id, threadId, turnId: live.id, seq: e.seq, question: String(detail.question), openedAt: e.ts });
    await indexed.catch((err: unknown) => console.error(`workspace index: ${(err as Error).message}`));
  }

  /**
   * Ends the running turn: its outcome, every approval or question it still waited on
   * (cancelled), and, for a loop, what comes next. Then /send callers get their answer
   * and the next queued message starts the next turn.
   */
  private async finishTurn(live: LiveTurn, end: TurnEnd): Promise<void> {
    const failure = end.outcome === "failed" ? (end.failure ?? { class: "unknown" as const, error: "the turn failed" }) : null;
    const closing = failure
      ? await this.log.prepare("turn-failed", { turnId: live.id, class: failure.class, error: failure.error })
      : await this.log.prepare("turn-ended", { turnId: live.id });
    const system = end.lost ? await this.log.prepare("system", { level: "error", text: `${LOST_TURN_TEXT}: ${failure!.error}`, turnId: live.id }) : null;
    const cancelled = await this.prepareCancellations(live.id);
    const loopNext = await this.prepareLoopStep(live, failure);
    await this.commits.write(() => {
      if (system) this.append(system);
      this.append(closing);
      this.applyCancellations(cancelled);
      this.applyLoopStep(loopNext);
      this.state!.turn = null;
      this.restage();
    });
    this.live = null;
    await this.afterTurnEnded(live.id, failure, cancelled);
    for (const seq of live.inputs) {
      const waiter = this.sendWaiters.get(seq);
      this.sendWaiters.delete(seq);
      waiter?.({ turnId: live.id, outcome: end.outcome, failure, reply: live.lastReply });
    }
    this.kick();
  }

  /** The system error line for a turn the host lost, written when this object is rebuilt. */
  private async loseTurn(): Promise<void> {
    const turn = this.state!.turn!;
    const system = await this.log.prepare("system", { level: "error", text: LOST_TURN_TEXT, turnId: turn.id });
    const failed = await this.log.prepare("turn-failed", { turnId: turn.id, class: "session", error: LOST_TURN_TEXT });
    const cancelled = await this.prepareCancellations(turn.id);
    await this.commits.write(() => {
      this.append(system);
      this.append(failed);
      this.applyCancellations(cancelled);
      if (this.state!.loop?.status === "running") this.state!.loop = { ...this.state!.loop, status: "paused", reason: "turn-failed" };
      this.state!.turn = null;
      this.restage();
    });
    await this.afterTurnEnded(turn.id, { class: "session", error: LOST_TURN_TEXT }, cancelled);
    this.kick();
  }

  private async afterTurnEnded(turnId: string, failure: TurnFailure | null, cancelled: Prepared[]): Promise<void> {
    const id = this.state!.id;
    const host = hostOf(this.env);
    await Promise.all([
      host.turnEnded(id),
      failure ? host.recordFailure(id, failure.class, failure.error) : null,
      ...cancelled.map((c) => this.afterWaitClosed(c.wait.kind, c.wait.id)),
      this.syncCatalogNow(),
    ]).catch((err: unknown) => console.error(`thread ${id}: after turn ${turnId}:`, err));
  }

  private async prepareCancellations(turnId: string): Promise<Prepared[]> {
    const open = this.turns.openWaits(turnId);
    return Promise.all(
      open.map(async (wait) => ({
        wait,
        event:
          wait.kind === "approval"
            ? await this.log.prepare("approval-resolved", { approvalId: wait.id, decision: "cancelled" })
            : await this.log.prepare("question-resolved", { requestId: wait.id, action: "cancelled" }),
      })),
    );
  }

  private applyCancellations(cancelled: Prepared[]): void {
    for (const c of cancelled) {
      const e = this.append(c.event);
      this.turns.closeWait(c.wait.id, "cancelled", c.wait.kind === "approval" ? { decision: "cancelled" } : { action: "cancelled" }, e.seq);
    }
  }

  /** What a loop does after one of its turns: stop (and why), or queue its prompt again. */
  private async prepareLoopStep(live: LiveTurn, failure: TurnFailure | null): Promise<LoopStep | null> {
    const loop = this.state!.loop;
    if (loop?.status !== "running") return null;
    const done = loop.done + 1;
    const reason: LoopState["reason"] = failure
      ? "turn-failed"
      : loop.until !== null && live.lastReply?.text.includes(loop.until)
        ? "until-matched"
        : done >= loop.maxTurns
          ? "max-turns"
          : null;
    if (reason) {
      const stopped = await this.log.prepare("loop-stopped", { reason: reason as EventBodies["loop-stopped"]["reason"] });
      return { loop: { ...loop, done, status: reason === "turn-failed" ? "paused" : "finished", reason }, event: stopped, again: null };
    }
    const again = await this.log.prepare("message", { text: loop.prompt, from: "loop" });
    return { loop: { ...loop, done }, event: null, again };
  }

  private applyLoopStep(step: LoopStep | null): void {
    if (!step) return;
    // A stop asked for while the turn ran wins over the step computed before it.
    if (this.state!.loop?.status !== "running") return;
    this.state!.loop = step.loop;
    if (step.event) this.append(step.event);
    if (step.again) this.queueLoopPrompt(step.again);
  }

  private queueLoopPrompt(prepared: PreparedEvent): void {
    const e = this.append(prepared);
    this.turns.queue(e.seq, this.state!.loop!.prompt, "loop");
  }

  private async afterWaitClosed(kind: "approval" | "question", id: string): Promise<void> {
    await workspaceOf(this.env, this.state!.spec.workspace)
      .closed(kind, id)
      .catch((err: unknown) => console.error(`workspace index: ${(err as Error).message}`));
    void this.syncCatalogNow();
  }

  private openWaitOrRefusal(id: string, kind: Wait["kind"]): Outcome<Wait> {
    const w = this.turns.wait(id, kind);
    if (!w)
      return kind === "approval"
        ? refuse(404, `thread has no approval ${id}`, CODES.approvalNotFound)
        : refuse(404, `thread has no question ${id}`, CODES.questionNotFound);
    if (w.status !== "open") {
      const outcome = w.outcome ?? {};
      return kind === "approval"
        ? refuse(200, `approval ${id} is already closed (${String(outcome.decision)})`, CODES.approvalClosed, { approvalId: id, ...outcome })
        : refuse(409, `question ${id} is already closed (${String(outcome.action)})`, CODES.questionClosed, { requestId: id, ...outcome });
    }
    return ok(w);
  }

  private questionStatus(w: Wait): QuestionStatus {
    const action = w.outcome?.action as QuestionAction | "cancelled" | undefined;
    const status: QuestionStatus["status"] =
      w.status === "open" ? "open" : action === "answer" ? "answered" : action === "dismiss" ? "dismissed" : action === "continue" ? "continued" : "cancelled";
    return {
      requestId: w.id,
      threadId: this.state!.id,
      turnId: w.turnId,
      question: String(w.detail.question),
      status,
      answer: typeof w.outcome?.answer === "string" ? w.outcome.answer : null,
      seq: w.seq,
      resolvedSeq: w.resolvedSeq,
    };
  }

  /** The stage follows from the state: call inside a commit after any change to it. */
  private restage(): void {
    const s = this.state!;
    s.stage = s.degraded ? "degraded" : !s.turn ? "idle" : this.turns.openWaits(s.turn.id).length > 0 ? "waiting" : "running";
    this.saveState();
  }

  private engine(path: string, body: unknown): Promise<Response> {
    return this.env.ENGINES.fetch(`https://engines${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  }

  private degradedRefusal(): Outcome<never> {
    const d = this.state!.degraded!;
    return refuse(
      503,
      `thread ${this.state!.id} is degraded: a body of turn ${d.index} (${d.tag}) could not be saved; POST /threads/${this.state!.id}/recover reopens it`,
      CODES.threadDegraded,
      { key: d.key, index: d.index, tag: d.tag },
    );
  }

  // ---- catalog sync ----

  /** The safety net (and retry) for catalog pushes; a throw makes the runtime retry it. */
  override async alarm(): Promise<void> {
    if (this.state?.turn) await this.ctx.storage.setAlarm(Date.now() + KEEPALIVE_MS);
    await this.syncCatalog();
  }

  // ---- internals ----

  /** Writes one event; call only inside a CommitQueue write. */
  private append(prepared: PreparedEvent, now?: Date): Accepted {
    const event = this.log.commit(prepared, now);
    this.unpublished.push(event);
    this.scheduleCatalogSync();
    return event;
  }

  /**
   * Shows a durable batch to followers (as one write each) and wakes waiting tails. If
   * the commit failed, followers are closed instead: they reconnect and resume from
   * whatever the log really holds.
   */
  private publish(durable: boolean): void {
    const events = this.unpublished;
    this.unpublished = [];
    if (!durable) {
      this.followers.close();
      return;
    }
    this.log.markDurable();
    if (events.length > 0) {
      this.updatedAt = events[events.length - 1]!.ts;
      this.followers.publish(events);
    }
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  private async prepareOrRefuse<K extends EventKind>(kind: K, body: EventBodies[K]): Promise<Outcome<PreparedEvent>> {
    try {
      return ok(await this.log.prepare(kind, body));
    } catch (err) {
      return refuse(503, `the blob store could not save a large body: ${(err as Error).message}`, CODES.blobStoreUnavailable);
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
    if (!this.state) return this.missing();
    const held = this.sql.exec("SELECT seq FROM held WHERE seq = ?", seq).toArray().length > 0;
    if (held) return ok(true);
    const row = this.log.get(seq);
    if (!row || row.kind !== "message") return refuse(404, `thread has no message ${seq}`, CODES.messageNotFound);
    return refuse(409, `message ${seq} is not held: only held messages can be edited or deleted`, CODES.messageNotHeld);
  }

  private beyondEnd(after: number): Outcome<never> | null {
    if (after <= this.log.durableSeq) return null;
    return refuse(400, `after=${after} is beyond the thread's last event (${this.log.durableSeq})`);
  }

  private missing(): Outcome<never> {
    return refuse(404, "no such thread", CODES.threadNotFound);
  }

  private archivedRefusal(): Outcome<never> {
    return refuse(409, `thread ${this.state!.id} is retired; restore it first`, CODES.threadArchived);
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
   * off the append rate. The alarm stays as a safety net, set at most once a minute, so
   * activity from just before a crash still reaches the catalog after a restart.
   */
  private scheduleCatalogSync(): void {
    if (!this.activityTimer)
      this.activityTimer = setTimeout(() => {
        this.activityTimer = null;
        void this.syncCatalogNow();
      }, this.config.catalogSyncMs);
    const now = Date.now();
    // A running turn's keepalive alarm also serves as the safety net.
    if (!this.state?.turn && now - this.safetyAlarmSetAt >= SAFETY_ALARM_MS) {
      this.safetyAlarmSetAt = now;
      void this.ctx.storage.setAlarm(now + SAFETY_ALARM_MS);
    }
  }

  /** Pushes now, which covers any timed push still pending; a failure arms the alarm to retry soon. */
  private async syncCatalogNow(): Promise<void> {
    if (this.activityTimer) clearTimeout(this.activityTimer);
    this.activityTimer = null;
    try {
      await this.syncCatalog();
    } catch {
      await this.ctx.storage.setAlarm(Date.now() + this.config.catalogSyncMs);
    }
  }

  private async syncCatalog(): Promise<void> {
    if (!this.state) return;
    await catalogOf(this.env).upsert(summarize(this.state, this.log.durableSeq, this.updatedAt));
  }
}
