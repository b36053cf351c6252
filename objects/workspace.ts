import { DurableObject } from "cloudflare:workers";
import type { ApprovalDecision, QuestionAction } from "../src/api/engine.js";
import type { ThreadSummary } from "../src/api/threads.js";
import type { PendingApproval, PendingQuestion } from "../src/api/turns.js";
import { CHANGE_KINDS, type FeedBodies, type FeedKind } from "../src/api/workspace-feed.js";
import type { Policy } from "../src/api/workspaces.js";
import { curatorModels, readConfig, type RuntimeConfig } from "../src/platform/config.js";
import type { Env } from "../src/platform/env.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { FollowHub } from "./lib/follow-hub.js";
import { ok, refuse, type Outcome } from "../src/api/outcome.js";
import { storageFault, storageFullRefusal } from "../src/rules/storage-fault.js";
import { forwardPage, reversePage } from "./lib/pages.js";
import { SSE_HEADERS } from "./lib/sse.js";
import { FEED_SCHEMA, toFrame, WorkspaceFeed, type FeedFrame, type FeedRow, type ThreadNews } from "./workspace/feed.js";
import { Memories, MEMORY_SCHEMA, sizeRefusal } from "./workspace/memory.js";
import { RoomIndex, ROOMS_SCHEMA } from "./workspace/rooms.js";
import type { EditMemory, Memory, MemoryAlert, MemoryPage, MemoryQuery, Recall, Recalled, Reflected, Retain, Retained } from "../src/api/memory.js";
import type { ReflectionAnswer, ReflectionRequest } from "../src/api/engine.js";
import { CODES } from "../src/api/errors.js";
import { DEFAULT_WORKSPACE } from "../src/api/turns.js";
import { callEngine } from "../src/platform/engine-call.js";
import { hostOf } from "../src/platform/stubs.js";
import { accountScope } from "../src/rules/accounts.js";

export interface FeedPageQuery {
  after?: number;
  before?: number;
  limit: number;
}

/** How long the outcome of a wait that closed before it was heard opening is kept. */
const CLOSED_EARLY_MS = 3_600_000;

/**
 * One workspace: the single writer of its head slot, of the policy its owner set, and of
 * its feed, and the index of what its threads wait on (approvals and questions). Each
 * thread stays the single writer of its own approvals: this index is told after the
 * thread decided, and a stale entry is answered by the thread with `approval-closed`.
 *
 * Every change goes through the commit queue, like a thread's, so feed readers see an
 * entry only once it is on disk.
 */
export class Workspace extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly feed: WorkspaceFeed;
  private readonly followers: FollowHub<FeedRow, FeedFrame>;
  private readonly commits: CommitQueue;
  private readonly config: RuntimeConfig;
  private readonly memories: Memories;
  private readonly rooms: RoomIndex;
  /** Whether this workspace's memory alert is open at the Host: null when not known (after a start, or an RPC that failed). */
  private alertOpen: boolean | null = null;
  /** Alert changes go to the Host one at a time, in the order retains settled, so a late raise cannot undo a later clear. */
  private alertChain: Promise<void> = Promise.resolve();
  /** One reflection at a time, asked for or automatic: two would read the same memories and write the same conclusions. */
  private reflection: Promise<unknown> = Promise.resolve();
  private reflecting = false;
  /** Entries of the batch being committed: readers see them once the batch is durable. */
  private unpublished: FeedFrame[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS pending (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (kind, id)
      );
      CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS watches (watch TEXT PRIMARY KEY, subscriber TEXT NOT NULL, filter TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS closed_early (kind TEXT NOT NULL, id TEXT NOT NULL, outcome TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (kind, id));
    ` + FEED_SCHEMA + MEMORY_SCHEMA + ROOMS_SCHEMA);
    this.feed = new WorkspaceFeed(this.sql);
    this.config = readConfig(env);
    this.memories = new Memories(this.sql);
    this.rooms = new RoomIndex(this.sql);
    this.followers = new FollowHub(this.feed, this.config.heartbeatMs);
    this.commits = new CommitQueue(
      ctx.storage,
      (durable) => this.publish(durable),
      () => this.rolledBack(),
    );
  }

  // ---- the head slot: decided here, atomically ----

  /**
   * Takes the head slot for `threadId`. `holder` names another thread that has it (and
   * nothing changed); `taken` says this call took it, so only that caller gives it back
   * if what it was for fails.
   */
  claimHead(threadId: string): Promise<{ holder: string | null; taken: boolean }> {
    return this.commits.write(() => {
      const holder = this.setting("head");
      if (holder === threadId) return { holder: null, taken: false };
      if (holder) return { holder, taken: false };
      this.put("head", threadId);
      this.record("head-changed", threadId, { head: threadId });
      return { holder: null, taken: true };
    });
  }

  /** Frees the slot if `threadId` holds it. */
  releaseHead(threadId: string): Promise<void> {
    return this.commits.write(() => {
      if (this.setting("head") !== threadId) return;
      this.sql.exec("DELETE FROM settings WHERE key = 'head'");
      this.record("head-changed", threadId, { head: null });
    });
  }

  head(): string | null {
    return this.setting("head");
  }

  // ---- review rooms ----

  /** The room of pull request `key`: the one armed before, or `candidate`, now (docs/rooms.md). */
  claimRoom(key: string, candidate: string): Promise<{ id: string; created: boolean }> {
    return this.commits.write(() => this.rooms.claim(key, candidate));
  }

  roomOf(key: string): string | null {
    return this.rooms.find(key);
  }

  // ---- policy ----

  /** The owner's policy as JSON text, or null while the configured one is in force. */
  policy(): string | null {
    return this.setting("policy");
  }

  /** Replaces the policy (already validated by the router); the same policy again is no change. */
  setPolicy(json: string): Promise<void> {
    return this.commits.write(() => {
      if (this.setting("policy") === json) return;
      this.put("policy", json);
      this.record("policy-changed", null, { policy: JSON.parse(json) as Policy });
    });
  }

  // ---- what threads wait on ----

  approvalOpened(item: PendingApproval): Promise<void> {
    return this.commits.write(() => {
      const { threadId, seq, ...body } = item;
      this.record("approval-opened", threadId, { ...body, threadSeq: seq });
      const early = this.closedEarly("approval", item.approvalId);
      if (early) this.record("approval-resolved", threadId, { approvalId: item.approvalId, decision: early as ApprovalDecision | "cancelled" });
      else this.open("approval", item.approvalId, threadId, item);
    });
  }

  questionOpened(item: PendingQuestion): Promise<void> {
    return this.commits.write(() => {
      const { threadId, seq, ...body } = item;
      this.record("question-opened", threadId, { ...body, threadSeq: seq });
      const early = this.closedEarly("question", item.requestId);
      if (early) this.record("question-resolved", threadId, { requestId: item.requestId, action: early as QuestionAction | "cancelled" });
      else this.open("question", item.requestId, threadId, item);
    });
  }

  /** A wait closed with `outcome` (a decision, or a question's action); told twice, it is recorded once. */
  closed(kind: "approval" | "question", id: string, outcome: ApprovalDecision | QuestionAction | "cancelled"): Promise<void> {
    return this.commits.write(() => {
      const open = this.sql.exec<{ thread_id: string }>("DELETE FROM pending WHERE kind = ? AND id = ? RETURNING thread_id", kind, id).toArray()[0];
      if (!open) {
        // The thread's "opened" may still be on its way: remember the outcome for it (an hour at most).
        const now = Date.now();
        this.sql.exec("INSERT OR IGNORE INTO closed_early (kind, id, outcome, at) VALUES (?, ?, ?, ?)", kind, id, outcome, now);
        this.sql.exec("DELETE FROM closed_early WHERE at < ?", now - CLOSED_EARLY_MS);
        return;
      }
      if (kind === "approval") this.record("approval-resolved", open.thread_id, { approvalId: id, decision: outcome as ApprovalDecision | "cancelled" });
      else this.record("question-resolved", open.thread_id, { requestId: id, action: outcome as QuestionAction | "cancelled" });
    });
  }

  /** JSON text of the pending approvals (`PendingApproval[]`), oldest first. */
  approvals(): string {
    return this.list("approval");
  }

  /** JSON text of the open questions (`PendingQuestion[]`), oldest first. */
  questions(): string {
    return this.list("question");
  }

  // ---- subscriptions to the workspace's threads (docs/subscriptions.md) ----

  /** Kept here so a thread spawned later watches for it too; the threads there now are told by the route. */
  addWatch(watch: string, subscriber: string, filter: string): Promise<void> {
    return this.commits.write(() => {
      this.sql.exec("INSERT OR REPLACE INTO watches (watch, subscriber, filter) VALUES (?, ?, ?)", watch, subscriber, filter);
    });
  }

  removeWatch(watch: string): Promise<void> {
    return this.commits.write(() => {
      this.sql.exec("DELETE FROM watches WHERE watch = ?", watch);
    });
  }

  /** Every subscription to this workspace's threads: `filter` is JSON text. */
  watches(): { watch: string; subscriber: string; filter: string }[] {
    return this.sql.exec<{ watch: string; subscriber: string; filter: string }>("SELECT watch, subscriber, filter FROM watches").toArray();
  }

  // ---- what threads tell: their summaries, and their lifecycle ----

  /**
   * A thread's summary, pushed beside the catalog's, with what happened to it since the
   * last push. A spawn's first summary is its starting point, not a change.
   */
  threadChanged(summary: ThreadSummary, news: ThreadNews[] = []): Promise<void> {
    return this.commits.write(() => {
      let spawned = false;
      for (const n of news) {
        if (n.kind === "thread-spawned") {
          const { role, title, engine, model, parent } = summary;
          this.record("thread-spawned", summary.id, { role, title, engine, model, parent });
          spawned = true;
        } else if (n.kind === "thread-archived") this.record("thread-archived", summary.id, { reason: n.reason });
        else this.record("thread-restored", summary.id, {});
      }
      if (spawned) this.feed.remember(summary);
      else {
        const changed = this.feed.threadChanged(summary);
        if (changed) this.unpublished.push(changed);
      }
    });
  }

  // ---- reading the feed ----

  /** A page of the feed as the JSON the route answers with; neither cursor: the newest page. */
  page(q: FeedPageQuery): Outcome<string> {
    if (q.after === undefined) {
      const entries = this.feed.backward(q.before ?? Number.MAX_SAFE_INTEGER, q.limit).map(toFrame);
      const oldest = entries[entries.length - 1]?.seq;
      return ok(reversePage(entries, oldest !== undefined && oldest > this.feed.oldestSeq()!));
    }
    const beyond = this.beyondEnd(q.after);
    if (beyond) return beyond;
    const entries = this.feed.forward(q.after, q.limit).map(toFrame);
    const nextAfter = entries[entries.length - 1]?.seq ?? q.after;
    return ok(forwardPage(entries, nextAfter, nextAfter < this.feed.durableSeq));
  }

  /**
   * The SSE routes come in over fetch, as a thread's follow does: workerd proxies the
   * Response natively, and the request's signal tells when the client left (a stream
   * returned over RPC never heard its reader cancel). Paths: /events?after=N and
   * /changes?after=N&threads=a,b (already checked by the router).
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const after = Number(url.searchParams.get("after") ?? 0);
    let accept: ((e: FeedFrame) => boolean) | undefined;
    if (url.pathname === "/changes") {
      const threads = url.searchParams.get("threads");
      const watched = threads ? new Set(threads.split(",")) : null;
      accept = (e) => CHANGE_KINDS.includes(e.kind) && (!watched || watched.has(e.threadId!));
    } else if (url.pathname !== "/events") return Response.json({ error: `no object route ${url.pathname}`, code: CODES.routeNotFound }, { status: 404 });
    const beyond = this.beyondEnd(after);
    if (beyond && !beyond.ok) return Response.json(beyond.body, { status: beyond.status });
    return new Response(this.followers.open(after, { accept, signal: request.signal }), { headers: SSE_HEADERS });
  }

  subscriberCount(): number {
    return this.followers.size;
  }

  // ---- internals ----

  /** Writes one feed entry; call only inside a commit. */
  private record<K extends FeedKind>(kind: K, threadId: string | null, body: FeedBodies[K]): void {
    this.unpublished.push(this.feed.append(kind, threadId, body));
  }

  /** A write was undone (a full volume midway through it): its feed entries never reach a follower. */
  private rolledBack(): void {
    this.feed.rolledBack();
    this.unpublished = this.unpublished.filter((f) => f.seq <= this.feed.lastSeq);
  }

  private publish(durable: boolean): void {
    const entries = this.unpublished;
    this.unpublished = [];
    this.followers.settle(entries, durable);
  }

  private beyondEnd(after: number): Outcome<never> | null {
    if (after <= this.feed.durableSeq) return null;
    return refuse(400, `after=${after} is beyond the workspace feed's last entry (${this.feed.durableSeq})`, CODES.cursorBeyondEnd);
  }

  // ---- memory (docs/memory.md); `workspace` is this object's name, which it does not know itself ----

  /**
   * Stores a memory. A retain that cannot be stored (over the size a memory holds, or a
   * storage fault) opens the workspace's memory alert at the Host; the next one stored
   * closes it.
   */
  async retain(workspace: string, body: Retain): Promise<Outcome<Retained>> {
    const tooLarge = sizeRefusal(body.text);
    if (tooLarge) return this.retainFailed(workspace, tooLarge);
    let stored: Outcome<Retained>;
    try {
      stored = await this.commits.write(() => {
        if (this.config.faults.has("memory-retain")) throw new Error("the store refused the write (fault drill memory-retain)");
        return this.memories.retain(body, new Date().toISOString());
      });
    } catch (err) {
      // A full volume is the host's fault, said by its own alert (storage-full), not this workspace's.
      const full = storageFault(err, true);
      if (full) return storageFullRefusal(full);
      return this.retainFailed(workspace, refuse(503, `the memory could not be stored: ${(err as Error).message}`, CODES.memoryStoreFailed));
    }
    if (stored.ok) {
      await this.setAlert(workspace, null);
      this.reflectWhenDue(workspace);
    }
    return stored;
  }

  recall(q: Recall): Recalled {
    return this.memories.recall(q);
  }

  memoryPage(q: MemoryQuery): MemoryPage {
    return this.memories.page(q);
  }

  memory(id: string): Outcome<Memory> {
    const m = this.memories.get(id);
    return m ? ok(m) : refuse(404, `no memory ${id}`, CODES.memoryNotFound);
  }

  editMemory(id: string, edit: EditMemory): Promise<Outcome<Memory>> {
    const tooLarge = edit.text === undefined ? null : sizeRefusal(edit.text);
    if (tooLarge) return Promise.resolve(tooLarge);
    return this.commits.write(() => this.memories.edit(id, edit, new Date().toISOString()));
  }

  forgetMemory(id: string): Promise<Outcome<{ id: string; forgotten: true }>> {
    return this.commits.write(() => this.memories.forget(id));
  }

  /**
   * The curator model reads the newest memories (reflections aside) and writes
   * reflections, each citing the memories it rests on: a citation that names no memory
   * of this workspace is dropped, and a reflection left citing none is not kept.
   */
  reflect(workspace: string, limit = 50): Promise<Outcome<Reflected>> {
    const run = this.reflection.then(() => this.reflectNow(workspace, limit));
    this.reflection = run.catch(() => {});
    return run;
  }

  /**
   * A workspace has no thread whose model could reflect: with no curator configured, the
   * model its threads get when they name none (its policy's default, else the runtime's).
   */
  private defaultModel(workspace: string): string {
    const owned = this.policy();
    const policy: Policy | undefined = owned ? (JSON.parse(owned) as Policy) : this.config.workspaces?.get(workspace)?.policy;
    return policy?.defaults.model ?? this.config.defaultModel;
  }

  private async reflectNow(workspace: string, limit: number): Promise<Outcome<Reflected>> {
    const c = this.config;
    const models = curatorModels(c, this.defaultModel(workspace));
    const read = this.memories.recent(limit);
    if (read.length < 2) return ok({ reflections: [], droppedCitations: [], model: null });
    // Marked before the model answers: one that fails is tried again only after as many new memories, not on every retain.
    const upTo = this.memories.position(read.at(-1)!.id);
    await this.commits.write(() => this.put("memory-reflected-upto", String(upTo)));
    const request: ReflectionRequest = {
      threadId: `workspace:${workspace}`,
      models,
      account: null,
      accountChoice: accountScope(c, workspace === DEFAULT_WORKSPACE ? null : workspace),
      proxyEnv: null,
      timeoutMs: c.curatorTimeoutMs,
      memories: read.map((m) => ({ id: m.id, kind: m.kind, text: m.text })),
    };
    let answer: ReflectionAnswer;
    try {
      answer = (await (await callEngine(this.env, "/reflections", request)).json()) as ReflectionAnswer;
    } catch (err) {
      return refuse(503, `the engine host could not be reached: ${(err as Error).message}`, CODES.reflectUnavailable);
    }
    if ("error" in answer) return refuse(503, `no curator model reflected: ${answer.error}`, CODES.reflectUnavailable);
    return this.commits.write((): Outcome<Reflected> => {
      const now = new Date().toISOString();
      const dropped: string[] = [];
      const reflections: Memory[] = [];
      for (const r of answer.reflections) {
        const cites = [...new Set(r.cites)].filter((id) => (this.memories.get(id) ? true : (dropped.push(id), false)));
        if (cites.length === 0) continue;
        const kept = this.memories.retain({ text: r.text }, now, "reflection", cites);
        if (kept.ok && !kept.value.duplicate) reflections.push(kept.value.memory);
      }
      return ok({ reflections, droppedCitations: dropped, model: answer.model });
    });
  }

  /** The automatic reflection: once enough memory was stored since the last (`SERVICE_MEMORY_REFLECT_EVERY`). */
  private reflectWhenDue(workspace: string): void {
    const every = this.config.memoryReflectEvery;
    if (every === 0 || this.reflecting) return;
    if (this.memories.since(Number(this.setting("memory-reflected-upto") ?? 0)) < every) return;
    this.reflecting = true;
    void this.reflect(workspace)
      .then((r) => !r.ok && console.error(`workspace ${workspace}: the automatic reflection failed: ${r.body.error}`))
      .catch((err: unknown) => console.error(`workspace ${workspace}: the automatic reflection failed: ${(err as Error).message}`))
      .finally(() => (this.reflecting = false));
  }

  private async retainFailed(workspace: string, refusal: Outcome<never>): Promise<Outcome<never>> {
    if (!refusal.ok) {
      const alert: MemoryAlert = { workspace, since: new Date().toISOString(), code: refusal.body.code ?? "", error: refusal.body.error };
      await this.setAlert(workspace, alert);
    }
    return refusal;
  }

  /** Raises or clears the alert at the Host; a clear when it is known closed costs nothing. */
  private setAlert(workspace: string, alert: MemoryAlert | null): Promise<void> {
    const change = this.alertChain.then(async () => {
      if (alert === null && this.alertOpen === false) return;
      try {
        await hostOf(this.env).setMemoryAlert(workspace, alert ? JSON.stringify(alert) : null);
        this.alertOpen = alert !== null;
      } catch (err) {
        // Unknown now: the next retain asks the Host again.
        this.alertOpen = null;
        console.error(`workspace ${workspace}: the memory alert could not be ${alert ? "raised" : "cleared"}: ${(err as Error).message}`);
      }
    });
    this.alertChain = change;
    return change;
  }

  // ---- the completions thread ----

  /**
   * The id of the thread that records this workspace's completions calls: `candidate`
   * becomes it on the first call, and every later call gets the same id.
   */
  completionsThread(candidate: string): string {
    const known = this.setting("completions-thread");
    if (known) return known;
    this.put("completions-thread", candidate);
    return candidate;
  }

  private setting(key: string): string | null {
    return this.sql.exec<{ value: string }>("SELECT value FROM settings WHERE key = ?", key).toArray()[0]?.value ?? null;
  }

  private put(key: string, value: string): void {
    this.sql.exec("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", key, value);
  }

  /** The outcome of a wait that closed before this object heard it open, consumed. */
  private closedEarly(kind: string, id: string): string | null {
    return this.sql.exec<{ outcome: string }>("DELETE FROM closed_early WHERE kind = ? AND id = ? RETURNING outcome", kind, id).toArray()[0]?.outcome ?? null;
  }

  private open(kind: string, id: string, threadId: string, item: unknown): void {
    this.sql.exec("INSERT OR REPLACE INTO pending (kind, id, thread_id, item) VALUES (?, ?, ?, ?)", kind, id, threadId, JSON.stringify(item));
  }

  /** Items are stored as JSON and answered as JSON: tool inputs are any JSON, which RPC types cannot express. */
  private list(kind: string): string {
    const items = this.sql.exec<{ item: string }>("SELECT item FROM pending WHERE kind = ? ORDER BY rowid", kind).toArray();
    return `[${items.map((r) => r.item).join(",")}]`;
  }
}
