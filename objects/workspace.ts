import { DurableObject } from "cloudflare:workers";
import type { ApprovalDecision, QuestionAction } from "../src/api/engine.js";
import type { ThreadSummary } from "../src/api/threads.js";
import type { PendingApproval, PendingQuestion } from "../src/api/turns.js";
import { CHANGE_KINDS, type FeedBodies, type FeedKind } from "../src/api/workspace-feed.js";
import type { Policy } from "../src/api/workspaces.js";
import { readConfig, type RuntimeConfig } from "../src/platform/config.js";
import type { Env } from "../src/platform/env.js";
import { CommitQueue } from "./lib/commit-queue.js";
import { FollowHub } from "./lib/follow-hub.js";
import { ok, refuse, type Outcome } from "../src/api/outcome.js";
import { storageFault, storageFullRefusal } from "../src/rules/storage-fault.js";
import { forwardPage, reversePage } from "./lib/pages.js";
import { SSE_HEADERS } from "./lib/sse.js";
import { FEED_SCHEMA, toFrame, WorkspaceFeed, type FeedFrame, type FeedRow, type ThreadNews } from "./workspace/feed.js";
import { Memories, sizeRefusal } from "./workspace/memory.js";
import { RoomIndex, ROOMS_SCHEMA } from "./workspace/rooms.js";
import { MEMORY_SCHEMA } from "./workspace/memory-schema.js";
import { MemoryAlerts } from "./workspace/memory-alert.js";
import { PendingIndex, PENDING_SCHEMA } from "./workspace/pending.js";
import { Reflection } from "./workspace/reflection.js";
import { SETTINGS_SCHEMA, WorkspaceSettings } from "./workspace/settings.js";
import type { EditMemory, Memory, MemoryPage, MemoryQuery, Recall, Recalled, Reflected, Retain, Retained } from "../src/api/memory.js";
import { CODES } from "../src/api/errors.js";

const WATCHES_SCHEMA = `
  CREATE TABLE IF NOT EXISTS watches (watch TEXT PRIMARY KEY, subscriber TEXT NOT NULL, filter TEXT NOT NULL);
`;

export interface FeedPageQuery {
  after?: number;
  before?: number;
  limit: number;
}

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
  private readonly settings: WorkspaceSettings;
  private readonly pending: PendingIndex;
  private readonly alerts: MemoryAlerts;
  private readonly reflection: Reflection;
  /** Entries of the batch being committed: readers see them once the batch is durable. */
  private unpublished: FeedFrame[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(PENDING_SCHEMA + SETTINGS_SCHEMA + WATCHES_SCHEMA + FEED_SCHEMA + MEMORY_SCHEMA + ROOMS_SCHEMA);
    this.feed = new WorkspaceFeed(this.sql);
    this.config = readConfig(env);
    this.memories = new Memories(this.sql);
    this.rooms = new RoomIndex(this.sql);
    this.settings = new WorkspaceSettings(this.sql);
    this.pending = new PendingIndex(this.sql, (kind, threadId, body) => this.record(kind, threadId, body));
    this.alerts = new MemoryAlerts(env);
    this.followers = new FollowHub(this.feed, this.config.heartbeatMs);
    this.commits = new CommitQueue(
      ctx.storage,
      (durable) => this.publish(durable),
      () => this.rolledBack(),
    );
    this.reflection = new Reflection({ env, config: this.config, commits: this.commits, memories: this.memories, settings: this.settings });
  }

  // ---- the head slot: decided here, atomically ----

  /**
   * Takes the head slot for `threadId`. `holder` names another thread that has it (and
   * nothing changed); `taken` says this call took it, so only that caller gives it back
   * if what it was for fails.
   */
  claimHead(threadId: string): Promise<{ holder: string | null; taken: boolean }> {
    return this.commits.write(() => {
      const holder = this.settings.get("head");
      if (holder === threadId) return { holder: null, taken: false };
      if (holder) return { holder, taken: false };
      this.settings.put("head", threadId);
      this.record("head-changed", threadId, { head: threadId });
      return { holder: null, taken: true };
    });
  }

  /** Frees the slot if `threadId` holds it. */
  releaseHead(threadId: string): Promise<void> {
    return this.commits.write(() => {
      if (this.settings.get("head") !== threadId) return;
      this.settings.remove("head");
      this.record("head-changed", threadId, { head: null });
    });
  }

  head(): string | null {
    return this.settings.get("head");
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
    return this.settings.get("policy");
  }

  /** Replaces the policy (already validated by the router); the same policy again is no change. */
  setPolicy(json: string): Promise<void> {
    return this.commits.write(() => {
      if (this.settings.get("policy") === json) return;
      this.settings.put("policy", json);
      this.record("policy-changed", null, { policy: JSON.parse(json) as Policy });
    });
  }

  // ---- what threads wait on ----

  approvalOpened(item: PendingApproval): Promise<void> {
    return this.commits.write(() => this.pending.approvalOpened(item));
  }

  questionOpened(item: PendingQuestion): Promise<void> {
    return this.commits.write(() => this.pending.questionOpened(item));
  }

  /** A wait closed with `outcome` (a decision, or a question's action); told twice, it is recorded once. */
  closed(kind: "approval" | "question", id: string, outcome: ApprovalDecision | QuestionAction | "cancelled"): Promise<void> {
    return this.commits.write(() => this.pending.closed(kind, id, outcome));
  }

  /** JSON text of the pending approvals (`PendingApproval[]`), oldest first. */
  approvals(): string {
    return this.pending.list("approval");
  }

  /** JSON text of the open questions (`PendingQuestion[]`), oldest first. */
  questions(): string {
    return this.pending.list("question");
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
    if (tooLarge) return this.alerts.retainFailed(workspace, tooLarge);
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
      return this.alerts.retainFailed(workspace, refuse(503, `the memory could not be stored: ${(err as Error).message}`, CODES.memoryStoreFailed));
    }
    if (stored.ok) {
      await this.alerts.set(workspace, null);
      this.reflection.reflectWhenDue(workspace);
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
   * reflections, each citing the memories it rests on (objects/workspace/reflection.ts).
   */
  reflect(workspace: string, limit = 50): Promise<Outcome<Reflected>> {
    return this.reflection.reflect(workspace, limit);
  }

  // ---- the completions thread ----

  /**
   * The id of the thread that records this workspace's completions calls: `candidate`
   * becomes it on the first call, and every later call gets the same id.
   */
  completionsThread(candidate: string): string {
    const known = this.settings.get("completions-thread");
    if (known) return known;
    this.settings.put("completions-thread", candidate);
    return candidate;
  }
}
