import { answerSchemaOf, routeRequest, type RouteAnswer, type RouteInput, type RouteKey } from "./routes.js";

export type { RouteAnswer, RouteInput, RouteKey };
import type { Subscribe } from "../src/api/subscriptions.js";
import type {  FilesQuery, OutlineQuery, ReadQuery, SearchBody } from "../src/api/code.js";
import type {  CommentsQuery, OverlapBody, PageQuery, PullsQuery } from "../src/api/code-host.js";
import type { ArmRoom, BuildAgent, StartRound } from "../src/api/rooms.js";
import type { EditMemory, MemoryQuery, Recall, Reflect, Retain } from "../src/api/memory.js";
import type { CycleEvent, GateRequest, GateResult } from "../src/api/cycles.js";
import type {  OperationSummary, ReportOperation, StartOperation } from "../src/api/operations.js";
import type { CompactionMode } from "../src/api/compaction.js";
import type {  JoinSeat, OfferHandoff, ReplaceSeat } from "../src/api/seats.js";
import type { ArmDrain } from "../src/api/drain.js";
import type { ErrorBody } from "../src/api/errors.js";
import type { FeedForwardPage, FeedReversePage } from "../src/api/workspace-feed.js";
import type { ThreadEvent } from "../src/api/events.js";
import type { ForwardPage, ReversePage } from "../src/api/tail.js";
import type { PostMessage, SpawnSpec } from "../src/api/threads.js";
import type { ApprovalResolved, ForkBody, SendMessage, SendResult } from "../src/api/turns.js";

/** The spawn spec as the client library types it. */
export type ClientSpawnSpec = Omit<SpawnSpec, "engine"> & { engine?: "engine_a" | "pi" };

/** An interrupted turn, as `interrupt` answers. */
export type TurnOutcome = Omit<SendResult, "seq" | "ts">;

/** A second answer to an approval is not an error: the runtime says it was already closed, and how. */
export type ApprovalAnswer = ApprovalResolved | { code: "approval-closed"; error: string; approvalId: string; decision: string };

interface Issue {
  path: PropertyKey[];
  message: string;
  errors?: Issue[][];
}

/** The issue that says most: an answer of one of several shapes (a page either way) names the field that failed in the nearest one. */
function deepest(issues: readonly Issue[]): { path: PropertyKey[]; message: string } {
  let best: { path: PropertyKey[]; message: string } = issues[0]!;
  for (const issue of issues) {
    const inner = issue.errors?.map((branch) => deepest(branch.map((i) => ({ ...i, path: [...issue.path, ...i.path] })))) ?? [issue];
    for (const candidate of inner) if (candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}

/** A refusal that is not an error, answered with a success status: `{error, code}`. */
function isRefusal(body: unknown): boolean {
  return typeof body === "object" && body !== null && typeof (body as ErrorBody).error === "string" && typeof (body as ErrorBody).code === "string";
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

  /** The answer as JSON: a refusal is a `rejected` failure, anything but a JSON object a `decode` one. */
  private async decode(method: string, path: string, res: Response): Promise<unknown> {
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
    return parsed;
  }

  /**
   * Any route of the contract, by its declaration (`METHOD /path`): the path's parameters,
   * query and body typed by its schemas, and the answer checked against its declared schema,
   * so one of the wrong shape is a `decode` failure. A refusal that is not an error (an
   * approval already closed) comes back as its body.
   */
  async route<K extends RouteKey>(key: K, input: RouteInput<K>): Promise<RouteAnswer<K>> {
    const { method, path, body } = routeRequest(key, input);
    const res = await this.request(method, path, body, input.headers);
    const parsed = await this.decode(method, path, res);
    const schema = answerSchemaOf(key, res.status);
    const result = schema?.safeParse(parsed);
    if (result && !result.success && !isRefusal(parsed)) {
      const issue = deepest(result.error.issues);
      throw new RuntimeError("decode", `${method} ${path}: the answer does not match its schema (${issue.path.join(".") || "the answer"}: ${issue.message})`);
    }
    return parsed as RouteAnswer<K>;
  }

  /** Whether the runtime serves, and whether sessions can run: the sandbox and each engine, with why not and what to run. */
  health() {
    return this.route("GET /health", {});
  }

  /**
   * The spawn's engine type lists only `engine_a` and `pi` (SPEC "Versioning" 5): the
   * runtime accepts `engine_b` too, for callers that name it on purpose over HTTP.
   */
  spawn(spec: ClientSpawnSpec = {}) {
    return this.route("POST /spawn", { body: spec });
  }

  thread(id: string) {
    return this.route("GET /threads/:id", { params: { id } });
  }

  list(query: RouteInput<"GET /threads">["query"] = {}) {
    return this.route("GET /threads", { query });
  }

  post(id: string, message: PostMessage, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/messages", { params: { id }, body: message, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** Sends a message and waits until the turn that answers it ended (or was queued: 202 with `queuedBecause`). */
  async send(id: string, message: Omit<SendMessage, "async">): Promise<SendResult> {
    const answer = await this.route("POST /threads/:id/send", { params: { id }, body: message });
    // Without `async`, a 202 is a queued turn's result, never the bare `{seq, ts}` an async send gets.
    if (!("outcome" in answer)) throw new RuntimeError("decode", `POST /threads/${id}/send: a send that waits answered no outcome`);
    return answer;
  }

  turn(id: string) {
    return this.route("GET /threads/:id/turn", { params: { id } });
  }

  interrupt(id: string) {
    return this.route("POST /threads/:id/interrupt", { params: { id } });
  }

  /** The context window: tokens in context, the window and its lines, a pending window, the last reduction, recent refusals. */
  compaction(id: string) {
    return this.route("GET /threads/:id/compact", { params: { id } });
  }

  /** Reduces the context now (`mode`, or the runtime's choice); settles a forced window. */
  compact(id: string, mode?: CompactionMode) {
    return this.route("POST /threads/:id/compact", { params: { id }, body: mode ? { mode } : {} });
  }

  /** The thread's operations (delegations, subscription edges, long actions), oldest first (docs/operations.md). */
  operations(id: string) {
    return this.route("GET /threads/:id/operations", { params: { id } });
  }

  operation(id: string, operation: string) {
    return this.route("GET /threads/:id/operations/:operation", { params: { id, operation } });
  }

  /** Starts an operation; a delegation spawns its child and sends it the prompt. */
  startOperation(id: string, body: StartOperation, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/operations", { params: { id }, body, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** A milestone, or the one outcome (a second is refused: `operation-settled`). */
  reportOperation(id: string, operation: string, report: ReportOperation, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/operations/:operation", { params: { id, operation }, body: report, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** Records a cycle event of a review or merge flow. */
  cycleEvent(id: string, event: CycleEvent) {
    return this.route("POST /threads/:id/events", { params: { id }, body: event });
  }

  /** Asks a gate; a refusal is a result (`passed: false`, `reasons`), not an error. */
  gate(id: string, request: GateRequest) {
    return this.route("POST /threads/:id/gate", { params: { id }, body: request });
  }

  /** Merges a child's work into the thread's checkout; again: `alreadyMerged`. */
  merge(id: string, child: string) {
    return this.route("POST /threads/:id/merge", { params: { id }, body: { child } });
  }

  /** The host's limits, with the hub's build seat limit when a hub is configured. */
  limits() {
    return this.route("GET /limits", {});
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
  subscriptions(id: string) {
    return this.route("GET /threads/:id/subscriptions", { params: { id } });
  }

  /** Watches a thread or a workspace's threads: each match wakes this thread with a message. */
  subscribe(id: string, body: Subscribe) {
    return this.route("POST /threads/:id/subscriptions", { params: { id }, body });
  }

  unsubscribe(id: string, watch: string) {
    return this.route("DELETE /threads/:id/subscriptions/:watch", { params: { id, watch } });
  }

  /** The thread's attachments, oldest first (each message's `attachments`). */
  attachments(id: string) {
    return this.route("GET /threads/:id/attachments", { params: { id } });
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
  steering(id: string) {
    return this.route("GET /threads/:id/steering", { params: { id } });
  }

  /** The thread's seats and which one holds it (docs/seats.md). */
  seats(id: string) {
    return this.route("GET /threads/:id/seats", { params: { id } });
  }

  /** Joins a seat, under a spawn's rules for its engine and model. */
  joinSeat(id: string, seat: JoinSeat) {
    return this.route("POST /threads/:id/seats", { params: { id }, body: seat });
  }

  /** Changes a seat's engine, model or placement; `changed: false` when nothing differs. */
  replaceSeat(id: string, seat: ReplaceSeat) {
    return this.route("POST /threads/:id/seats/replace", { params: { id }, body: seat });
  }

  /** Removes a seat; answers once its running turn ended (class `closed`). */
  removeSeat(id: string, name: string) {
    return this.route("DELETE /threads/:id/seats/:name", { params: { id, name } });
  }

  /** Offers the thread to another seat; the offer's id is its `fromSeq`. */
  offerHandoff(id: string, offer: OfferHandoff) {
    return this.route("POST /threads/:id/handoff", { params: { id }, body: offer });
  }

  handoffs(id: string) {
    return this.route("GET /threads/:id/handoffs", { params: { id } });
  }

  acceptHandoff(id: string, fromSeq: number) {
    return this.route("POST /threads/:id/handoffs/:fromSeq/accept", { params: { id, fromSeq } });
  }

  declineHandoff(id: string, fromSeq: number) {
    return this.route("POST /threads/:id/handoffs/:fromSeq/decline", { params: { id, fromSeq } });
  }

  /** Allows or denies the tool call an `approval-request` event names by `approvalId`. */
  approve(id: string, approvalId: string, decision: "allow" | "deny") {
    return this.route("POST /threads/:id/approvals/:approvalId", { params: { id, approvalId }, body: { decision } });
  }

  question(id: string, requestId: string) {
    return this.route("GET /threads/:id/questions/:requestId", { params: { id, requestId } });
  }

  answer(id: string, requestId: string, answer: string) {
    return this.route("POST /threads/:id/questions/:requestId/answer", { params: { id, requestId }, body: { answer } });
  }

  dismiss(id: string, requestId: string) {
    return this.route("POST /threads/:id/questions/:requestId/dismiss", { params: { id, requestId } });
  }

  continueWithoutAnswer(id: string, requestId: string) {
    return this.route("POST /threads/:id/questions/:requestId/continue", { params: { id, requestId } });
  }

  recover(id: string, reason: string) {
    return this.route("POST /threads/:id/recover", { params: { id }, body: { acknowledgeHistoryGap: true, reason } });
  }

  fork(id: string, body: ForkBody) {
    return this.route("POST /threads/:id/fork", { params: { id }, body });
  }

  loop(id: string) {
    return this.route("GET /threads/:id/loop", { params: { id } });
  }

  startLoop(id: string, body: { prompt: string; maxTurns?: number; until?: string }) {
    return this.route("POST /threads/:id/loop", { params: { id }, body });
  }

  continueLoop(id: string, turns?: number) {
    return this.route("POST /threads/:id/loop/continue", { params: { id }, body: turns === undefined ? {} : { turns } });
  }

  stopLoop(id: string) {
    return this.route("POST /threads/:id/loop/stop", { params: { id } });
  }

  approvals(workspace = "default") {
    return this.route("GET /workspaces/:name/approvals", { params: { name: workspace } });
  }

  questions(workspace = "default") {
    return this.route("GET /workspaces/:name/questions", { params: { name: workspace } });
  }

  incidents(since = 0) {
    return this.route("GET /incidents", { query: { since } });
  }

  tail(id: string, query: { after?: number | string; limit?: number; wait?: number }): Promise<ForwardPage>;
  tail(id: string, query: { before: number | string | "latest"; limit?: number }): Promise<ReversePage>;
  tail(id: string, query: Record<string, string | number | undefined>) {
    return this.route("GET /threads/:id/tail", { params: { id }, query });
  }

  /** A page of a workspace's feed: forward from `after`, backward from `before`, or the newest entries. */
  workspaceTail(workspace: string, query: { after: number | string; limit?: number }): Promise<FeedForwardPage>;
  workspaceTail(workspace: string, query?: { before?: number | string | "latest"; limit?: number }): Promise<FeedReversePage>;
  workspaceTail(workspace: string, query: Record<string, string | number | undefined> = {}) {
    return this.route("GET /workspaces/:name/tail", { params: { name: workspace }, query });
  }

  // ---- workspace memory (docs/memory.md) ----

  /** Stores a memory, or finds the same text kept already (`duplicate`). */
  retain(workspace: string, body: Retain) {
    return this.route("POST /workspaces/:name/memory/retain", { params: { name: workspace }, body });
  }

  recall(workspace: string, body: Recall) {
    return this.route("POST /workspaces/:name/memory/recall", { params: { name: workspace }, body });
  }

  reflect(workspace: string, body: Reflect = {}) {
    return this.route("POST /workspaces/:name/memory/reflect", { params: { name: workspace }, body });
  }

  /** A page of the workspace's memories, newest first; pass `nextBefore` as `before` for the next. */
  memories(workspace: string, query: MemoryQuery = {}) {
    return this.route("GET /workspaces/:name/memory", { params: { name: workspace }, query });
  }

  memory(workspace: string, id: string) {
    return this.route("GET /workspaces/:name/memory/:id", { params: { name: workspace, id } });
  }

  /** A person's correction: text, key, tags, importance, or `retired`. */
  editMemory(workspace: string, id: string, edit: EditMemory) {
    return this.route("PATCH /workspaces/:name/memory/:id", { params: { name: workspace, id }, body: edit });
  }

  forgetMemory(workspace: string, id: string) {
    return this.route("DELETE /workspaces/:name/memory/:id", { params: { name: workspace, id } });
  }

  /** The memories retained from a thread. */
  threadMemory(id: string, query: Omit<MemoryQuery, "thread"> = {}) {
    return this.route("GET /threads/:id/memory", { params: { id }, query });
  }

  // ---- code reads (docs/code.md) ----

  codeRoots() {
    return this.route("GET /code/roots", {});
  }

  /** A page of a root's tracked files; pass `nextCursor` as `cursor` for the next. */
  codeFiles(query: FilesQuery) {
    return this.route("GET /code/files", { query });
  }

  codeRead(query: ReadQuery) {
    return this.route("GET /code/read", { query });
  }

  codeOutline(query: OutlineQuery) {
    return this.route("GET /code/outline", { query });
  }

  codeSearch(body: SearchBody) {
    return this.route("POST /code/search", { body });
  }

  // ---- the code host (docs/code-host.md); `repo` is `owner/name` ----

  /** A page of pull requests, open ones unless `state` says; pass `nextCursor` as `cursor` for the next. */
  pulls(repo: string, query: PullsQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "" }, query });
  }

  /** A page of the files a pull request changes, with patches and hunk ranges. */
  pullDiff(repo: string, number: number, query: PageQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/diff", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** A page of a pull request's comments: the conversation, then the review comments, then the reviews. */
  pullComments(repo: string, number: number, query: CommentsQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/comments", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** A page of the check runs on a pull request's head commit. */
  pullChecks(repo: string, number: number, query: PageQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/checks", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** One duplicate-work pass; it acts only when the runtime runs with SERVICE_PR_OVERLAP=on. */
  overlap(body: OverlapBody) {
    return this.route("POST /github/overlap", { body });
  }

  // ---- review rooms and pull requests (docs/rooms.md); `repo` is `owner/name` ----

  /** Arms a room for a pull request, or adopts the workspace's room for it (`created` false). */
  armRoom(workspace: string, body: ArmRoom) {
    return this.route("POST /workspaces/:name/rooms", { params: { name: workspace }, body });
  }

  /** A pull request's room and its newest round. */
  findRoom(workspace: string, repo: string, pr: number) {
    return this.route("GET /workspaces/:name/rooms", { params: { name: workspace }, query: { repo, pr } });
  }

  roomCapabilities() {
    return this.route("GET /rooms/capabilities", {});
  }

  room(id: string) {
    return this.route("GET /rooms/:id", { params: { id } });
  }

  /** Starts the next round; the reviewer returns its verdict with the submit_verdict tool. */
  startRound(id: string, body: StartRound = {}) {
    return this.route("POST /rooms/:id/rounds", { params: { id }, body });
  }

  round(id: string, n: number) {
    return this.route("GET /rooms/:id/rounds/:n", { params: { id, n } });
  }

  /** Posts a round's verdict (default: the newest) as one review on the code host. */
  finalize(id: string, n?: number) {
    return this.route("POST /rooms/:id/finalize", { params: { id }, body: n === undefined ? {} : { n } });
  }

  /** Starts a build thread in a worktree of the pull request's branch. */
  startBuildThread(workspace: string, pr: number, body: BuildAgent) {
    return this.route("POST /workspaces/:name/prs/:number/agents", { params: { name: workspace, number: pr }, body });
  }

  /** The read-only merge receipt. */
  mergeReceipt(workspace: string, pr: number, repo: string) {
    return this.route("GET /workspaces/:name/prs/:number/receipt", { params: { name: workspace, number: pr }, query: { repo } });
  }

  costPerMergedPr() {
    return this.route("GET /metrics/cost-per-merged-pr", {});
  }

  accounts() {
    return this.route("GET /accounts", {});
  }

  accessToken(account: string) {
    return this.route("POST /accounts/:id/access-token", { params: { id: account } });
  }

  drain() {
    return this.route("GET /drain", {});
  }

  armDrain(body: ArmDrain = {}) {
    return this.route("POST /drain", { body });
  }

  /** Disarms the drain; with `owner`, releases that owner's claim. */
  disarmDrain(owner?: string) {
    return owner === undefined ? this.route("DELETE /drain", {}) : this.route("DELETE /drain/claim", { query: { owner } });
  }

  spawnPause() {
    return this.route("GET /keeper/spawn-pause", {});
  }

  clearSpawnPause(reason: string) {
    return this.route("POST /keeper/spawn-pause/clear", { body: { reason } });
  }

  attention() {
    return this.route("GET /attention", {});
  }

  attentionChanges(after: number | string = 0) {
    return this.route("GET /attention/changes", { query: { after } });
  }

  archive(id: string, reason?: string) {
    return this.route("DELETE /threads/:id", { params: { id }, query: { reason: reason || undefined } });
  }

  restore(id: string) {
    return this.route("POST /threads/:id/restore", { params: { id } });
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
