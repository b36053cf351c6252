import type { z } from "zod";
import type { AccessToken, AccountView } from "../src/api/accounts.js";
import {
  ForwardPageAnswer,
  HealthAnswer,
  MessageAcceptedAnswer,
  ReversePageAnswer,
  SendResultAnswer,
  SpawnResultAnswer,
  ThreadListPageAnswer,
  ThreadRowAnswer,
  TurnStatusAnswer,
  BuildThreadAnswer,
  CapabilitiesAnswer,
  CostPerMergedPrAnswer,
  ReceiptAnswer,
  ReviewPostedAnswer,
  RoomFoundAnswer,
  RoomOnlyAnswer,
  RoundOnlyAnswer,
} from "../src/api/answers.js";
import type { AttachmentEntry } from "../src/api/attachments.js";
import type { Subscribe, Subscription } from "../src/api/subscriptions.js";
import type { CodeRoot, FilesPage, FilesQuery, OutlineAnswer, OutlineQuery, ReadAnswer, ReadQuery, SearchAnswer, SearchBody } from "../src/api/code.js";
import type { ChecksPage, CommentsPage, CommentsQuery, DiffPage, OverlapAnswer, OverlapBody, PageQuery, PullsPage, PullsQuery } from "../src/api/code-host.js";
import type { ArmRoom, BuildAgent, Capabilities, CostPerMergedPr, PostedReview, Receipt, Room, Round, StartRound } from "../src/api/rooms.js";
import type { EditMemory, Memory, MemoryPage, MemoryQuery, Recall, Recalled, Reflect, Reflected, Retain, Retained } from "../src/api/memory.js";
import type { CycleEvent, GateRequest, GateResult, MergeResult } from "../src/api/cycles.js";
import type { OperationAccepted, OperationDetail, OperationSummary, ReportOperation, StartOperation } from "../src/api/operations.js";
import type { CompactionMode, CompactionStatus, CompactResult } from "../src/api/compaction.js";
import type { Handoff, HandoffList, HandoffOffered, JoinSeat, OfferHandoff, ReplaceResult, ReplaceSeat, Seat, SeatList } from "../src/api/seats.js";
import type { ArmDrain, DrainStatus } from "../src/api/drain.js";
import type { EngineEntry } from "../src/api/engines.js";
import type { ErrorBody } from "../src/api/errors.js";
import type { AttentionChange, AttentionItem, SpawnPause } from "../src/api/operator.js";
import type { FeedForwardPage, FeedReversePage } from "../src/api/workspace-feed.js";
import type { ThreadEvent } from "../src/api/events.js";
import type { ForwardPage, ReversePage } from "../src/api/tail.js";
import type { MessageAccepted, PostMessage, SpawnResult, SpawnSpec, ThreadListPage, ThreadRow } from "../src/api/threads.js";
import type {
  ApprovalResolved,
  ForkBody,
  Incident,
  LoopState,
  PendingApproval,
  PendingQuestion,
  QuestionStatus,
  SendMessage,
  SendResult,
  SteeringEntry,
  TurnStatus,
} from "../src/api/turns.js";

/** The spawn spec as the client library types it. */
export type ClientSpawnSpec = Omit<SpawnSpec, "engine"> & { engine?: "engine_a" | "pi" };

/** An interrupted turn, as `interrupt` answers. */
export type TurnOutcome = Omit<SendResult, "seq" | "ts">;

/** A second answer to an approval is not an error: the runtime says it was already closed, and how. */
export type ApprovalAnswer = ApprovalResolved | { code: "approval-closed"; error: string; approvalId: string; decision: string };

/** A query string of the values given. */
/** `owner/name` as two path segments, each escaped. */
function repoPath(repo: string): string {
  const [owner = "", name = ""] = repo.split("/");
  return `${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
}

function searchOf(query: Record<string, string | number | undefined>): URLSearchParams {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
  return qs;
}

/** The client library's three failure kinds (SPEC "Errors"). */
export class RuntimeError extends Error {
  constructor(
    readonly kind: "transport" | "rejected" | "decode",
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly details?: ErrorBody,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  /** Runtime origin, optionally with a path prefix. Default: SERVICE_AGENTS_URL or http://127.0.0.1:4741. */
  baseUrl?: string;
  /** Polling interval and first reconnect delay. Default: SERVICE_AGENTS_POLL_MS or 2000. */
  pollMs?: number;
  /** Page size when catching up by tail. Default: SERVICE_AGENTS_TAIL_LIMIT or 200. */
  tailLimit?: number;
}

export type StreamStatus = "live" | "lost" | "unsupported" | "gone";

/** The configuration variables where the runtime has an environment (Node, Deno, Bun); none in a browser. */
const env = (name: string): string | undefined => (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];

export class RuntimeClient {
  readonly baseUrl: string;
  readonly pollMs: number;
  readonly tailLimit: number;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? env("SERVICE_AGENTS_URL") ?? "http://127.0.0.1:4741").replace(/\/+$/, "");
    this.pollMs = options.pollMs ?? Number(env("SERVICE_AGENTS_POLL_MS") ?? 2000);
    this.tailLimit = options.tailLimit ?? Number(env("SERVICE_AGENTS_TAIL_LIMIT") ?? 200);
  }

  /** The runtime's answer, whatever its status; no answer at all is a `transport` failure. */
  private async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await fetch(this.baseUrl + path, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new RuntimeError("transport", `${method} ${path}: ${(err as Error).message}`);
    }
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await this.request(method, path, body, headers);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RuntimeError("decode", `${method} ${path}: answer is not JSON (${res.status})`, res.status);
    }
    if (!res.ok) {
      const err = parsed as ErrorBody;
      throw new RuntimeError("rejected", err.error ?? `${method} ${path}: ${res.status}`, res.status, err.code, err);
    }
    // Every route answers a JSON object.
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new RuntimeError("decode", `${method} ${path}: the answer is not a JSON object (${res.status})`, res.status);
    return parsed as T;
  }

  /** A call whose answer must match `answer` (src/api/answers.ts): one that does not is a `decode` failure. */
  private async checked<T>(answer: z.ZodTypeAny, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const parsed = await this.call<unknown>(method, path, body, headers);
    const result = answer.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      throw new RuntimeError("decode", `${method} ${path}: the answer does not match its schema (${issue.path.join(".") || "the answer"}: ${issue.message})`);
    }
    return parsed as T;
  }

  /** Whether the runtime serves, and whether sessions can run: the sandbox and each engine, with why not and what to run. */
  health(): Promise<z.infer<typeof HealthAnswer>> {
    return this.checked(HealthAnswer, "GET", "/health");
  }

  /**
   * The spawn's engine type lists only `engine_a` and `pi` (SPEC "Versioning" 5): the
   * runtime accepts `engine_b` too, for callers that name it on purpose over HTTP.
   */
  spawn(spec: ClientSpawnSpec = {}): Promise<SpawnResult> {
    return this.checked(SpawnResultAnswer, "POST", "/spawn", spec);
  }

  thread(id: string): Promise<ThreadRow> {
    return this.checked(ThreadRowAnswer, "GET", `/threads/${id}`);
  }

  list(query: Record<string, string | number> = {}): Promise<ThreadListPage> {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
    return this.checked(ThreadListPageAnswer, "GET", `/threads${qs.size ? `?${qs}` : ""}`);
  }

  post(id: string, message: PostMessage, options: { idempotencyKey?: string } = {}): Promise<MessageAccepted> {
    return this.checked(MessageAcceptedAnswer, "POST", `/threads/${id}/messages`, message, options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {});
  }

  /** Sends a message and waits until the turn that answers it ended. */
  send(id: string, message: Omit<SendMessage, "async">): Promise<SendResult> {
    return this.checked(SendResultAnswer, "POST", `/threads/${id}/send`, message);
  }

  turn(id: string): Promise<TurnStatus> {
    return this.checked(TurnStatusAnswer, "GET", `/threads/${id}/turn`);
  }

  interrupt(id: string): Promise<TurnOutcome> {
    return this.call("POST", `/threads/${id}/interrupt`);
  }

  /** The context window: tokens in context, the window and its lines, a pending window, the last reduction, recent refusals. */
  compaction(id: string): Promise<CompactionStatus> {
    return this.call("GET", `/threads/${id}/compact`);
  }

  /** Reduces the context now (`mode`, or the runtime's choice); settles a forced window. */
  compact(id: string, mode?: CompactionMode): Promise<CompactResult> {
    return this.call("POST", `/threads/${id}/compact`, mode ? { mode } : {});
  }

  /** The thread's operations (delegations, subscription edges, long actions), oldest first (docs/operations.md). */
  operations(id: string): Promise<{ operations: OperationSummary[] }> {
    return this.call("GET", `/threads/${id}/operations`);
  }

  operation(id: string, operation: string): Promise<OperationDetail> {
    return this.call("GET", `/threads/${id}/operations/${encodeURIComponent(operation)}`);
  }

  /** Starts an operation; a delegation spawns its child and sends it the prompt. */
  startOperation(id: string, body: StartOperation, options: { idempotencyKey?: string } = {}): Promise<OperationAccepted> {
    return this.call("POST", `/threads/${id}/operations`, body, options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {});
  }

  /** A milestone, or the one outcome (a second is refused: `operation-settled`). */
  reportOperation(id: string, operation: string, report: ReportOperation, options: { idempotencyKey?: string } = {}): Promise<OperationAccepted> {
    return this.call("POST", `/threads/${id}/operations/${encodeURIComponent(operation)}`, report, options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {});
  }

  /** Records a cycle event of a review or merge flow. */
  cycleEvent(id: string, event: CycleEvent): Promise<MessageAccepted> {
    return this.call("POST", `/threads/${id}/events`, event);
  }

  /** Asks a gate; a refusal is a result (`passed: false`, `reasons`), not an error. */
  gate(id: string, request: GateRequest): Promise<GateResult> {
    return this.call("POST", `/threads/${id}/gate`, request);
  }

  /** Merges a child's work into the thread's checkout; again: `alreadyMerged`. */
  merge(id: string, child: string): Promise<MergeResult> {
    return this.call("POST", `/threads/${id}/merge`, { child });
  }

  /** The host's limits, with the hub's build seat limit when a hub is configured. */
  limits(): Promise<{ hub: { buildSeatLimit: number | null } } & Record<string, unknown>> {
    return this.call("GET", "/limits");
  }

  /**
   * A parallel step (SPEC "Client conventions"): each child a delegation of `id`, at most
   * `concurrency` at once: by default the hub's build seat limit when a hub is configured,
   * otherwise all at once. Once a child fails (or is cancelled) no queued child starts; the
   * ones running finish. The gate (`auto` or `human`) sits on the step: it is asked once,
   * over the children that ran, after they all settled.
   */
  async parallel(id: string, children: ParallelChild[], options: { concurrency?: number; gate?: "auto" | "human"; step?: string } = {}): Promise<ParallelResult> {
    const limit = options.concurrency ?? (await this.limits()).hub.buildSeatLimit ?? children.length;
    const queue = children.map((child, index) => ({ child, index }));
    const ran: ParallelResult["children"] = [];
    let failed = false;
    const worker = async () => {
      for (let next = queue.shift(); next && !failed; next = failed ? undefined : queue.shift()) {
        try {
          const started = await this.startOperation(id, { kind: "delegation", title: next.child.title, prompt: next.child.prompt, ...(next.child.spec ? { spec: next.child.spec } : {}) });
          let op = await this.operation(id, started.operation);
          while (op.state === "open") {
            await sleep(Math.min(this.pollMs, 250));
            op = await this.operation(id, started.operation);
          }
          ran.push({ index: next.index, title: next.child.title, operation: op.operation, child: op.child, state: op.state, outcome: op.outcome });
          if (op.state !== "completed") failed = true;
        } catch (err) {
          // A child that could not start (or be followed) fails the step like one that failed.
          ran.push({ index: next.index, title: next.child.title, operation: null, child: null, state: "failed", outcome: null, error: (err as Error).message });
          failed = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, children.length)) }, worker));
    ran.sort((a, b) => a.index - b.index);
    const skipped = children.map((c, index) => ({ index, title: c.title })).filter((c) => !ran.some((r) => r.index === c.index));
    // A child that never started is no operation: the gate hears of it as a failed check.
    const unstarted = ran.flatMap((r) => (r.operation ? [] : [{ name: `start of ${r.title}`, ok: false, ...(r.error ? { detail: r.error.slice(0, 2000) } : {}) }]));
    const gate = options.gate
      ? await this.gate(id, { mode: options.gate, operations: ran.flatMap((r) => (r.operation ? [r.operation] : [])), ...(unstarted.length ? { checks: unstarted } : {}), ...(options.step ? { step: options.step } : {}) })
      : null;
    return { children: ran, skipped, gate };
  }

  /** What the thread watches (docs/subscriptions.md). */
  subscriptions(id: string): Promise<{ subscriptions: Subscription[] }> {
    return this.call("GET", `/threads/${id}/subscriptions`);
  }

  /** Watches a thread or a workspace's threads: each match wakes this thread with a message. */
  subscribe(id: string, body: Subscribe): Promise<Subscription> {
    return this.call("POST", `/threads/${id}/subscriptions`, body);
  }

  unsubscribe(id: string, watch: string): Promise<Subscription> {
    return this.call("DELETE", `/threads/${id}/subscriptions/${encodeURIComponent(watch)}`);
  }

  /** The thread's attachments, oldest first (each message's `attachments`). */
  attachments(id: string): Promise<{ attachments: AttachmentEntry[] }> {
    return this.call("GET", `/threads/${id}/attachments`);
  }

  /** One attachment's bytes and media type, by its hash. */
  async attachment(id: string, sha256: string): Promise<{ mediaType: string; bytes: Uint8Array }> {
    const path = `/threads/${id}/attachments/${sha256}`;
    const res = await this.request("GET", path);
    if (!res.ok) {
      const err = (await res.json().catch(() => ({}))) as ErrorBody;
      throw new RuntimeError("rejected", err.error ?? `GET ${path}: ${res.status}`, res.status, err.code, err);
    }
    return { mediaType: res.headers.get("content-type") ?? "application/octet-stream", bytes: new Uint8Array(await res.arrayBuffer()) };
  }

  /** Every message sent to steer a running turn, oldest first, and whether the engine took it. */
  steering(id: string): Promise<{ steering: SteeringEntry[] }> {
    return this.call("GET", `/threads/${id}/steering`);
  }

  /** The thread's seats and which one holds it (docs/seats.md). */
  seats(id: string): Promise<SeatList> {
    return this.call("GET", `/threads/${id}/seats`);
  }

  /** Joins a seat, under a spawn's rules for its engine and model. */
  joinSeat(id: string, seat: JoinSeat): Promise<Seat> {
    return this.call("POST", `/threads/${id}/seats`, seat);
  }

  /** Changes a seat's engine, model or placement; `changed: false` when nothing differs. */
  replaceSeat(id: string, seat: ReplaceSeat): Promise<ReplaceResult> {
    return this.call("POST", `/threads/${id}/seats/replace`, seat);
  }

  /** Removes a seat; answers once its running turn ended (class `closed`). */
  removeSeat(id: string, name: string): Promise<{ seat: Seat; holder: string; seq: number; ts: string }> {
    return this.call("DELETE", `/threads/${id}/seats/${encodeURIComponent(name)}`);
  }

  /** Offers the thread to another seat; the offer's id is its `fromSeq`. */
  offerHandoff(id: string, offer: OfferHandoff): Promise<HandoffOffered> {
    return this.call("POST", `/threads/${id}/handoff`, offer);
  }

  handoffs(id: string): Promise<HandoffList> {
    return this.call("GET", `/threads/${id}/handoffs`);
  }

  acceptHandoff(id: string, fromSeq: number): Promise<Handoff> {
    return this.call("POST", `/threads/${id}/handoffs/${fromSeq}/accept`);
  }

  declineHandoff(id: string, fromSeq: number): Promise<Handoff> {
    return this.call("POST", `/threads/${id}/handoffs/${fromSeq}/decline`);
  }

  /** Allows or denies the tool call an `approval-request` event names by `approvalId`. */
  approve(id: string, approvalId: string, decision: "allow" | "deny"): Promise<ApprovalAnswer> {
    return this.call("POST", `/threads/${id}/approvals/${encodeURIComponent(approvalId)}`, { decision });
  }

  question(id: string, requestId: string): Promise<QuestionStatus> {
    return this.call("GET", `/threads/${id}/questions/${encodeURIComponent(requestId)}`);
  }

  answer(id: string, requestId: string, answer: string): Promise<QuestionStatus> {
    return this.call("POST", `/threads/${id}/questions/${encodeURIComponent(requestId)}/answer`, { answer });
  }

  dismiss(id: string, requestId: string): Promise<QuestionStatus> {
    return this.call("POST", `/threads/${id}/questions/${encodeURIComponent(requestId)}/dismiss`);
  }

  continueWithoutAnswer(id: string, requestId: string): Promise<QuestionStatus> {
    return this.call("POST", `/threads/${id}/questions/${encodeURIComponent(requestId)}/continue`);
  }

  recover(id: string, reason: string): Promise<MessageAccepted> {
    return this.call("POST", `/threads/${id}/recover`, { acknowledgeHistoryGap: true, reason });
  }

  fork(id: string, body: ForkBody): Promise<SpawnResult & { parent: string; atSeq: number }> {
    return this.call("POST", `/threads/${id}/fork`, body);
  }

  loop(id: string): Promise<{ loop: LoopState | null }> {
    return this.call("GET", `/threads/${id}/loop`);
  }

  startLoop(id: string, body: { prompt: string; maxTurns?: number; until?: string }): Promise<LoopState> {
    return this.call("POST", `/threads/${id}/loop`, body);
  }

  continueLoop(id: string, turns?: number): Promise<LoopState> {
    return this.call("POST", `/threads/${id}/loop/continue`, turns === undefined ? {} : { turns });
  }

  stopLoop(id: string): Promise<LoopState> {
    return this.call("POST", `/threads/${id}/loop/stop`);
  }

  approvals(workspace = "default"): Promise<{ workspace: string; approvals: PendingApproval[] }> {
    return this.call("GET", `/workspaces/${encodeURIComponent(workspace)}/approvals`);
  }

  questions(workspace = "default"): Promise<{ workspace: string; questions: PendingQuestion[] }> {
    return this.call("GET", `/workspaces/${encodeURIComponent(workspace)}/questions`);
  }

  incidents(since = 0): Promise<{ since: number; windowHours: number; incidents: Incident[] }> {
    return this.call("GET", `/incidents?since=${since}`);
  }

  tail(id: string, query: { after?: number | string; limit?: number; wait?: number }): Promise<ForwardPage>;
  tail(id: string, query: { before: number | string | "latest"; limit?: number }): Promise<ReversePage>;
  tail(id: string, query: Record<string, string | number | undefined>): Promise<ForwardPage | ReversePage> {
    return this.checked("before" in query ? ReversePageAnswer : ForwardPageAnswer, "GET", `/threads/${id}/tail?${searchOf(query)}`);
  }

  /** A page of a workspace's feed: forward from `after`, backward from `before`, or the newest entries. */
  workspaceTail(workspace: string, query: { after: number | string; limit?: number }): Promise<FeedForwardPage>;
  workspaceTail(workspace: string, query?: { before?: number | string | "latest"; limit?: number }): Promise<FeedReversePage>;
  workspaceTail(workspace: string, query: Record<string, string | number | undefined> = {}): Promise<FeedForwardPage | FeedReversePage> {
    return this.call("GET", `/workspaces/${encodeURIComponent(workspace)}/tail?${searchOf(query)}`);
  }

  // ---- workspace memory (docs/memory.md) ----

  /** Stores a memory, or finds the same text kept already (`duplicate`). */
  retain(workspace: string, body: Retain): Promise<Retained> {
    return this.call("POST", `/workspaces/${encodeURIComponent(workspace)}/memory/retain`, body);
  }

  recall(workspace: string, body: Recall): Promise<Recalled> {
    return this.call("POST", `/workspaces/${encodeURIComponent(workspace)}/memory/recall`, body);
  }

  reflect(workspace: string, body: Reflect = {}): Promise<Reflected> {
    return this.call("POST", `/workspaces/${encodeURIComponent(workspace)}/memory/reflect`, body);
  }

  /** A page of the workspace's memories, newest first; pass `nextBefore` as `before` for the next. */
  memories(workspace: string, query: MemoryQuery = {}): Promise<MemoryPage> {
    return this.call("GET", `/workspaces/${encodeURIComponent(workspace)}/memory?${searchOf(query)}`);
  }

  memory(workspace: string, id: string): Promise<Memory> {
    return this.call("GET", `/workspaces/${encodeURIComponent(workspace)}/memory/${encodeURIComponent(id)}`);
  }

  /** A person's correction: text, key, tags, importance, or `retired`. */
  editMemory(workspace: string, id: string, edit: EditMemory): Promise<Memory> {
    return this.call("PATCH", `/workspaces/${encodeURIComponent(workspace)}/memory/${encodeURIComponent(id)}`, edit);
  }

  forgetMemory(workspace: string, id: string): Promise<{ id: string; forgotten: true }> {
    return this.call("DELETE", `/workspaces/${encodeURIComponent(workspace)}/memory/${encodeURIComponent(id)}`);
  }

  /** The memories retained from a thread. */
  threadMemory(id: string, query: Omit<MemoryQuery, "thread"> = {}): Promise<MemoryPage> {
    return this.call("GET", `/threads/${id}/memory?${searchOf(query)}`);
  }

  // ---- code reads (docs/code.md) ----

  codeRoots(): Promise<{ roots: CodeRoot[] }> {
    return this.call("GET", "/code/roots");
  }

  /** A page of a root's tracked files; pass `nextCursor` as `cursor` for the next. */
  codeFiles(query: FilesQuery): Promise<FilesPage> {
    return this.call("GET", `/code/files?${searchOf(query)}`);
  }

  codeRead(query: ReadQuery): Promise<ReadAnswer> {
    return this.call("GET", `/code/read?${searchOf(query)}`);
  }

  codeOutline(query: OutlineQuery): Promise<OutlineAnswer> {
    return this.call("GET", `/code/outline?${searchOf(query)}`);
  }

  codeSearch(body: SearchBody): Promise<SearchAnswer> {
    return this.call("POST", "/code/search", body);
  }

  // ---- the code host (docs/code-host.md); `repo` is `owner/name` ----

  /** A page of pull requests, open ones unless `state` says; pass `nextCursor` as `cursor` for the next. */
  pulls(repo: string, query: PullsQuery = {}): Promise<PullsPage> {
    return this.call("GET", `/github/${repoPath(repo)}/prs?${searchOf(query)}`);
  }

  /** A page of the files a pull request changes, with patches and hunk ranges. */
  pullDiff(repo: string, number: number, query: PageQuery = {}): Promise<DiffPage> {
    return this.call("GET", `/github/${repoPath(repo)}/prs/${number}/diff?${searchOf(query)}`);
  }

  /** A page of a pull request's comments: the conversation, then the review comments, then the reviews. */
  pullComments(repo: string, number: number, query: CommentsQuery = {}): Promise<CommentsPage> {
    return this.call("GET", `/github/${repoPath(repo)}/prs/${number}/comments?${searchOf(query)}`);
  }

  /** A page of the check runs on a pull request's head commit. */
  pullChecks(repo: string, number: number, query: PageQuery = {}): Promise<ChecksPage> {
    return this.call("GET", `/github/${repoPath(repo)}/prs/${number}/checks?${searchOf(query)}`);
  }

  /** One duplicate-work pass; it acts only when the runtime runs with SERVICE_PR_OVERLAP=on. */
  overlap(body: OverlapBody): Promise<OverlapAnswer> {
    return this.call("POST", "/github/overlap", body);
  }

  // ---- review rooms and pull requests (docs/rooms.md); `repo` is `owner/name` ----

  /** Arms a room for a pull request, or adopts the workspace's room for it (`created` false). */
  armRoom(workspace: string, body: ArmRoom): Promise<{ room: Room }> {
    return this.checked(RoomOnlyAnswer, "POST", `/workspaces/${encodeURIComponent(workspace)}/rooms`, body);
  }

  /** A pull request's room and its newest round. */
  findRoom(workspace: string, repo: string, pr: number): Promise<{ room: Room; round: Round | null }> {
    return this.checked(RoomFoundAnswer, "GET", `/workspaces/${encodeURIComponent(workspace)}/rooms?${searchOf({ repo, pr })}`);
  }

  roomCapabilities(): Promise<Capabilities> {
    return this.checked(CapabilitiesAnswer, "GET", "/rooms/capabilities");
  }

  room(id: string): Promise<{ room: Room }> {
    return this.checked(RoomOnlyAnswer, "GET", `/rooms/${encodeURIComponent(id)}`);
  }

  /** Starts the next round; the reviewer returns its verdict with the submit_verdict tool. */
  startRound(id: string, body: StartRound = {}): Promise<{ round: Round }> {
    return this.checked(RoundOnlyAnswer, "POST", `/rooms/${encodeURIComponent(id)}/rounds`, body);
  }

  round(id: string, n: number): Promise<{ round: Round }> {
    return this.checked(RoundOnlyAnswer, "GET", `/rooms/${encodeURIComponent(id)}/rounds/${n}`);
  }

  /** Posts a round's verdict (default: the newest) as one review on the code host. */
  finalize(id: string, n?: number): Promise<{ review: PostedReview }> {
    return this.checked(ReviewPostedAnswer, "POST", `/rooms/${encodeURIComponent(id)}/finalize`, n === undefined ? {} : { n });
  }

  /** Starts a build thread in a worktree of the pull request's branch. */
  startBuildThread(workspace: string, pr: number, body: BuildAgent): Promise<{ threadId: string; worktree: string }> {
    return this.checked(BuildThreadAnswer, "POST", `/workspaces/${encodeURIComponent(workspace)}/prs/${pr}/agents`, body);
  }

  /** The read-only merge receipt. */
  mergeReceipt(workspace: string, pr: number, repo: string): Promise<Receipt> {
    return this.checked(ReceiptAnswer, "GET", `/workspaces/${encodeURIComponent(workspace)}/prs/${pr}/receipt?${searchOf({ repo })}`);
  }

  costPerMergedPr(): Promise<CostPerMergedPr> {
    return this.checked(CostPerMergedPrAnswer, "GET", "/metrics/cost-per-merged-pr");
  }

  accounts(): Promise<{ accounts: AccountView[]; simulator: boolean; engines: EngineEntry[] }> {
    return this.call("GET", "/accounts");
  }

  accessToken(account: string): Promise<AccessToken> {
    return this.call("POST", `/accounts/${encodeURIComponent(account)}/access-token`);
  }

  drain(): Promise<DrainStatus> {
    return this.call("GET", "/drain");
  }

  armDrain(body: ArmDrain = {}): Promise<DrainStatus> {
    return this.call("POST", "/drain", body);
  }

  /** Disarms the drain; with `owner`, releases that owner's claim. */
  disarmDrain(owner?: string): Promise<DrainStatus> {
    return this.call("DELETE", owner === undefined ? "/drain" : `/drain/claim?owner=${encodeURIComponent(owner)}`);
  }

  spawnPause(): Promise<SpawnPause> {
    return this.call("GET", "/keeper/spawn-pause");
  }

  clearSpawnPause(reason: string): Promise<SpawnPause> {
    return this.call("POST", "/keeper/spawn-pause/clear", { reason });
  }

  attention(): Promise<{ items: AttentionItem[]; seq: number }> {
    return this.call("GET", "/attention");
  }

  attentionChanges(after: number | string = 0): Promise<{ changes: AttentionChange[]; nextAfter: string; hasMore: boolean }> {
    return this.call("GET", `/attention/changes?after=${after}`);
  }

  archive(id: string, reason?: string): Promise<MessageAccepted & { archived: true }> {
    return this.call("DELETE", `/threads/${id}${reason ? `?reason=${encodeURIComponent(reason)}` : ""}`);
  }

  restore(id: string): Promise<MessageAccepted & { archived: false }> {
    return this.call("POST", `/threads/${id}/restore`);
  }

  /**
   * Every event after `after`, in order, for as long as the caller iterates: over the
   * `follow` push route, reconnecting from the last seq seen with Last-Event-ID; over
   * `tail` polling if the push route is missing. `onStatus` hears live/lost/unsupported/gone.
   */
  async *follow(
    id: string,
    options: { after?: number; signal?: AbortSignal; onStatus?: (s: StreamStatus) => void } = {},
  ): AsyncGenerator<ThreadEvent> {
    let cursor = options.after ?? 0;
    let delay = this.pollMs;
    while (!options.signal?.aborted) {
      let res: Response;
      try {
        res = await fetch(`${this.baseUrl}/threads/${id}/follow`, {
          headers: { accept: "text/event-stream", "last-event-id": String(cursor) },
          signal: options.signal,
        });
      } catch {
        if (options.signal?.aborted) return;
        options.onStatus?.("lost");
        await sleep(delay, options.signal);
        delay = Math.min(delay * 2, 30_000);
        continue;
      }
      if (res.status === 404 && (await res.json().catch(() => ({})) as ErrorBody).code === "thread-not-found") {
        options.onStatus?.("gone");
        return;
      }
      if (res.status === 404) {
        options.onStatus?.("unsupported");
        yield* this.poll(id, cursor, options.signal);
        return;
      }
      if (!res.ok || !res.body) throw new RuntimeError("rejected", `follow answered ${res.status}`, res.status);
      options.onStatus?.("live");
      delay = this.pollMs;
      try {
        for await (const event of parseEvents(res.body)) {
          cursor = event.seq;
          yield event;
        }
      } catch {
        if (options.signal?.aborted) return;
      }
      options.onStatus?.("lost");
    }
  }

  /**
   * Posts a message and yields the thread's events after it until the turn that answers
   * it has ended: that turn's `turn-ended` or `turn-failed` is the last event yielded.
   * Events of a turn already running (the message waits for the next) pass through too.
   * A held message starts no turn until it is released, so its events go on until then or
   * until the caller stops. Read through `follow`, with its reconnects and statuses.
   */
  async *sendAndFollow(
    id: string,
    message: PostMessage,
    options: { idempotencyKey?: string; signal?: AbortSignal; onStatus?: (s: StreamStatus) => void } = {},
  ): AsyncGenerator<ThreadEvent> {
    const { seq } = await this.post(id, message, { idempotencyKey: options.idempotencyKey });
    // Ending the follow's request when the turn ends, or when the caller's signal fires.
    const done = new AbortController();
    const stop = () => done.abort();
    options.signal?.addEventListener("abort", stop, { once: true });
    let turnId: string | null = null;
    try {
      for await (const event of this.follow(id, { after: seq, signal: done.signal, onStatus: options.onStatus })) {
        yield event;
        if (event.kind === "turn-started" && event.body.inputs.includes(seq)) turnId = event.body.turnId;
        else if ((event.kind === "turn-ended" || event.kind === "turn-failed") && event.body.turnId === turnId) return;
      }
    } finally {
      options.signal?.removeEventListener("abort", stop);
      stop();
    }
  }

  private async *poll(id: string, after: number, signal?: AbortSignal): AsyncGenerator<ThreadEvent> {
    let cursor = String(after);
    while (!signal?.aborted) {
      const page = await this.tail(id, { after: cursor, limit: this.tailLimit, wait: this.pollMs });
      for (const e of page.events) yield e;
      cursor = page.nextAfter;
    }
  }
}

/** One child of a parallel step: a delegation's title, prompt and the child's spawn spec. */
export interface ParallelChild {
  title: string;
  prompt: string;
  spec?: SpawnSpec;
}

export interface ParallelResult {
  /** The children that ran, in the order given, each with how it ended. */
  children: { index: number; title: string; operation: string | null; child: string | null; state: OperationSummary["state"]; outcome: OperationSummary["outcome"]; error?: string }[];
  /** The children that never started: a child before them failed. */
  skipped: { index: number; title: string }[];
  gate: GateResult | null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** The `data:` of each SSE frame with an id, parsed as an event; comments and hints are skipped. */
export async function* parseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ThreadEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      if (data && frame.includes("id: ")) {
        try {
          yield JSON.parse(data) as ThreadEvent;
        } catch {
          throw new RuntimeError("decode", `follow sent a frame that is not JSON: ${data.slice(0, 80)}`);
        }
      }
    }
  }
}
