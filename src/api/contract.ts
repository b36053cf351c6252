import * as z from "zod";
import { CompactionStatus, CompactRequest, CompactResult } from "./compaction.js";
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatCompletionStreamError, COMPLETIONS_CODES, ModelEntry, ModelList } from "./completions.js";
import { ArmDrain, DrainStatus, ReleaseDrainClaim } from "./drain.js";
import { CODES } from "./errors.js";
import {
  AttentionBoard,
  AttentionChange,
  AttentionChanges,
  AttentionItem,
  BootSweep,
  ClearSpawnPause,
  Estate,
  ExternalPeer,
  ExternalPeerBody,
  HostLoad,
  HostReportBody,
  Incidents,
  KeeperMetrics,
  Limits,
  Live,
  Metrics,
  MetricsHistory,
  OpenApiDocument,
  PeerList,
  Preview,
  PreviewBody,
  PreviewList,
  Removed,
  SpawnPause,
  Timings,
  Health,
} from "./operator.js";
import { ListThreadsQuery, MessageAccepted, PatchMessage, PostedMessage, PostMessage, SeatLease, SpawnResult, SpawnSpec, ThreadHead, ThreadListPage, ThreadRestored, ThreadRetired, ThreadRow } from "./threads.js";
import {
  ApprovalDecisionBody,
  ApprovalResolved,
  ForkBody,
  ForkResult,
  LoopContinue,
  LoopStart,
  LoopState,
  QuestionAnswerBody,
  QuestionStatus,
  RecoverBody,
  RoleChange,
  SendAccepted,
  SendMessage,
  SendResult,
  SteeringList,
  ThreadLoop,
  TurnResult,
  TurnStatus,
} from "./turns.js";
import { AttachmentList } from "./attachments.js";
import { LoggedEvent, ToolResultBody } from "./events.js";
import { StreamDelta, StreamGap } from "./sse.js";
import { AguiEvent, AguiPage, AguiPageQuery, RunAgentInput } from "./agui.js";
import { ForwardEventPage, ReverseEventPage } from "./tail.js";
import { Policy, PolicySet, WorkspaceHead, WorkspaceList, WorkspaceView } from "./workspaces.js";
import { FeedEntry, FeedForwardPage, FeedReversePage, WorkspaceApprovals, WorkspaceQuestions } from "./workspace-feed.js";
import { Handoff, HandoffList, HandoffOffered, JoinSeat, OfferHandoff, ReplaceResult, ReplaceSeat, Seat, SeatList, SeatRemoved } from "./seats.js";
import { OperationAccepted, OperationDetail, OperationList, ReportOperation, StartOperation } from "./operations.js";
import { Subscribe, Subscription, SubscriptionList } from "./subscriptions.js";
import { CycleEvent, GateRequest, GateResult, MergeRequest, MergeResult } from "./cycles.js";
import { RuntimeToolCall, RuntimeToolResult } from "./tools.js";
import { AccessToken, AccountList, EngineBCreditReset, ModelRefusalCleared } from "./accounts.js";
import { CodeRoots, FilesPage, FilesQuery, OutlineAnswer, OutlineQuery, ReadAnswer, ReadQuery, SearchAnswer, SearchBody } from "./code.js";
import { ChecksPage, CommentsPage, CommentsQuery, DiffPage, OverlapAnswer, OverlapBody, PageQuery, PullsPage, PullsQuery } from "./code-host.js";
import { ArmRoom, BuildAgent, BuildThread, Capabilities, CostPerMergedPr, Finalize, Receipt, ReceiptQuery, ReviewPosted, RoomFound, RoomOnly, RoomQuery, RoundOnly, StartRound } from "./rooms.js";
import { GenerateInterface, GeneratedInterface } from "./ui.js";
import { EditMemory, Memory, MemoryForgotten, MemoryPage, MemoryQuery, Recall, Recalled, Reflect, Reflected, Retain, Retained, ThreadMemoryQuery } from "./memory.js";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A path parameter as hono writes it (`:sha256` is one parameter, digits and all): what the document, the client and the tests fill in. */
export const PATH_PARAM = /:([A-Za-z][A-Za-z0-9]*)/g;

/** A refusal a route may answer: its status and its `code` (SPEC "Errors"). */
export type RouteError = readonly [status: number, code: string];

/**
 * One route as the HTTP interface promises it, declared once: the router serves it from
 * here (src/http/serve.ts: method, path, drain gate, body and query checks), `GET
 * /openapi.json` is generated from it, and the client library and the tests read it.
 */
export interface RouteContract {
  summary: string;
  /** The query the route reads: checked by src/http/serve.ts, unless its handler reads it itself (cursors and limits, through src/http/query.ts). */
  query?: z.ZodType;
  body?: z.ZodType;
  /** The success status; 200 when absent. */
  status?: 200 | 201 | 202;
  /** The success answer's schema, in its family's file: the document, the client library and the end-to-end suite check answers by it. */
  answer?: z.ZodType;
  /** What the success answer is when it is not JSON: an event stream, either, or bytes of their own media type (`binary`). */
  media?: "sse" | "json-or-sse" | "json-or-prometheus" | "binary";
  /**
   * An event stream's frames, by their SSE `event:` name (`message` for a frame that names
   * none): when each comes and its `data`'s schema (none when the data is not JSON).
   */
  events?: Readonly<Record<string, { when: string; data?: z.ZodType }>>;
  /**
   * Other successes, beside `status`: each its status, when it is given, its answer's
   * schema (the success's otherwise), and the codes it carries (`queuedBecause.code`).
   */
  also?: readonly { status: 200 | 201 | 202; when: string; answer?: z.ZodType; codes?: readonly string[] }[];
  /** Refused with 503 `draining` while the host drains. */
  drains?: true;
  /**
   * Answers programs on this machine only (SPEC "Authentication" 3): a `Host` that is not
   * a loopback name, or any browser's request (`Origin`), gets 403 `caller-not-local`
   * (src/rules/caller-policy.ts); the document says so as `x-local-only`.
   */
  localOnly?: true;
  /** Errors in the completions (OpenAI) shape, not the runtime's. */
  completionsErrors?: true;
  /**
   * Refusals beyond those every route of its kind may give (403 `untrusted-caller`, and
   * `caller-not-local` when `localOnly`; 400
   * `invalid-body` and 413 `body-too-large` with a body; 400 `invalid-query` with a query;
   * 400 `invalid-param` with a path parameter besides `:id`; 404 `thread-not-found` under `/threads/:id`).
   */
  errors?: readonly RouteError[];
}

/** A seq cursor, as the log routes read it: a non-negative integer. */
const Cursor = z.string().regex(/^\d+$/);
const FollowQuery = z.object({ after: Cursor.optional() });
const TailQuery = z.object({
  after: Cursor.optional(),
  before: z.union([Cursor, z.literal("latest")]).optional(),
  limit: z.string().regex(/^\d+$/).optional(),
});
const SinceQuery = z.object({ since: z.string().regex(/^\d{1,16}$/).optional() });

const SPAWN_ERRORS: readonly RouteError[] = [
  [400, CODES.spawnCwdRequired],
  [400, CODES.spawnCwdFenced],
  [422, CODES.engineModelMismatch],
  [400, CODES.modelNotFound],
  [400, CODES.accountNotInRoster],
  [400, CODES.modelNotAllowed],
  [400, CODES.unknownAccount],
  [400, CODES.accountProviderMismatch],
  [404, CODES.workspaceNotFound],
  [400, CODES.headNeedsWorkspace],
  [409, CODES.headTaken],
  [503, CODES.engineUnavailable],
  [503, CODES.spawnsPaused],
  [429, CODES.sessionCap],
];
const ACCEPTS: readonly RouteError[] = [
  [409, CODES.threadArchived],
  [503, CODES.threadDegraded],
  [503, CODES.blobStoreUnavailable],
];
/** A message's attachments. */
const ATTACHED: readonly RouteError[] = [
  [413, CODES.attachmentTooLarge],
  [400, CODES.attachmentInvalid],
];
/** A message's `seat`. */
const SEAT_NAMED: readonly RouteError[] = [
  [404, CODES.seatNotFound],
  [409, CODES.seatRemoved],
];
/** A seat's engine, model and placement, checked as a spawn's are (the thread's `cwd` with them: no session works in a fenced one). */
const SEAT_TARGET: readonly RouteError[] = [
  [400, CODES.spawnCwdFenced],
  [422, CODES.engineModelMismatch],
  [400, CODES.modelNotAllowed],
  [400, CODES.modelNotFound],
  [400, CODES.accountProviderMismatch],
  [503, CODES.engineUnavailable],
  [404, CODES.peerNotFound],
];
const HANDOFF_ANSWER: readonly RouteError[] = [
  [404, CODES.handoffNotFound],
  [409, CODES.handoffClosed],
  [409, CODES.threadArchived],
];
/** A message's `onBusy` while a turn runs. */
const BUSY: readonly RouteError[] = [[409, CODES.threadBusy]];
const QUESTION: readonly RouteError[] = [
  [404, CODES.questionNotFound],
  [409, CODES.questionClosed],
];
/** What a code-host read may answer when the host refuses or is missing (docs/code-host.md). */
const CODE_HOST: readonly RouteError[] = [
  [404, CODES.codeHostNotFound],
  [503, CODES.codeHostCredentials],
  [503, CODES.codeHostForbidden],
  [429, CODES.codeHostRateLimited],
  [503, CODES.codeHostUnavailable],
  [502, CODES.codeHostFailed],
  [503, CODES.codeServiceUnavailable],
];
const WORKSPACE: readonly RouteError[] = [[404, CODES.workspaceNotFound]];
const COMPLETIONS = [
  [400, COMPLETIONS_CODES.unknownWorkspace],
  [400, COMPLETIONS_CODES.invalidRequest],
  [400, COMPLETIONS_CODES.imageNotSupported],
  [400, COMPLETIONS_CODES.toolsNotSupported],
  [400, COMPLETIONS_CODES.sessionLabelTooLong],
  [400, COMPLETIONS_CODES.badTrafficKind],
  [404, COMPLETIONS_CODES.modelNotFound],
  [409, COMPLETIONS_CODES.noEligibleAccount],
  [409, COMPLETIONS_CODES.noSpendableAccount],
  [429, COMPLETIONS_CODES.accountsExhausted],
  [429, COMPLETIONS_CODES.rateLimited],
  [502, COMPLETIONS_CODES.upstreamError],
  [503, COMPLETIONS_CODES.accountPoolUnavailable],
] as const;

/**
 * Every route the router serves, by `METHOD /path` as hono writes it. Each row keeps its own
 * type here, so that src/http/serve.ts can type a handler's input from it (`Declared`).
 */
const DECLARED = {
  "GET /health": { summary: "The build the host runs, the session sandbox and each engine's availability (with why not and what to run), and the fields `/spawn` accepts.", answer: Health },
  "GET /openapi.json": { summary: "This document.", answer: OpenApiDocument },
  "GET /incidents": { summary: "Failed turns of the last 24 hours, grouped by class and fingerprint.", query: SinceQuery, answer: Incidents },

  "GET /drain": { summary: "The drain's state.", answer: DrainStatus },
  "POST /drain": { summary: "Arms the drain; an `owner` claims it.", body: ArmDrain, answer: DrainStatus, errors: [[409, CODES.drainClaimed]] },
  "DELETE /drain": { summary: "Disarms the drain.", answer: DrainStatus, errors: [[409, CODES.drainClaimed]] },
  "DELETE /drain/claim": {
    summary: "Disarms a claimed drain, for its owner only.",
    query: ReleaseDrainClaim,
    answer: DrainStatus,
    errors: [
      [409, CODES.drainClaimed],
      [409, CODES.drainNotClaimed],
    ],
  },

  "POST /spawn": { summary: "Creates a thread.", body: SpawnSpec, status: 201, answer: SpawnResult, drains: true, errors: SPAWN_ERRORS },
  "GET /threads": { summary: "A page of thread summaries.", query: ListThreadsQuery, answer: ThreadListPage, errors: [[429, CODES.threadListRateLimited]] },
  "GET /threads/:id": { summary: "The thread row.", answer: ThreadRow },
  "GET /threads/:id/head": { summary: "The thread's identity: type, role, workspace, parent, seat lease, title.", answer: ThreadHead },
  "DELETE /threads/:id": { summary: "Retires (archives) the thread.", query: z.object({ reason: z.string().max(1000).optional() }), answer: ThreadRetired, errors: [[409, CODES.threadArchived]] },
  "POST /threads/:id/restore": {
    summary: "Restores a retired thread.",
    answer: ThreadRestored,
    errors: [
      [409, CODES.threadNotArchived],
      [409, CODES.headTaken],
    ],
  },
  "PUT /threads/:id/seat-lease": { summary: "Sets or frees the thread's seat lease.", body: SeatLease, answer: MessageAccepted, errors: [[409, CODES.threadArchived]] },
  "POST /threads/:id/messages": {
    summary: "Appends a message; a turn starts unless it is held. Answers once the message is on disk.",
    body: PostMessage,
    status: 202,
    answer: PostedMessage,
    drains: true,
    errors: [...ACCEPTS, ...BUSY, ...SEAT_NAMED, ...ATTACHED, [400, CODES.messageEmpty], [400, CODES.invalidHeader], [409, CODES.idempotencyConflict]],
  },
  "PATCH /threads/:id/messages/:seq": {
    summary: "Edits or releases a held message (a release is refused while the host drains).",
    body: PatchMessage,
    answer: MessageAccepted,
    errors: [
      ...ACCEPTS,
      [400, CODES.messageEmpty],
      [404, CODES.messageNotFound],
      [409, CODES.messageNotHeld],
      [503, CODES.draining],
    ],
  },
  "DELETE /threads/:id/messages/:seq": {
    summary: "Deletes a held message.",
    answer: MessageAccepted,
    errors: [
      [404, CODES.messageNotFound],
      [409, CODES.messageNotHeld],
    ],
  },
  "GET /threads/:id/tail": {
    summary: "A page of the event log: forward with `after`, reverse with `before` or neither; `wait` holds an empty forward page open.",
    query: TailQuery.extend({ wait: z.string().regex(/^\d+$/).optional() }),
    answer: z.union([ForwardEventPage, ReverseEventPage]),
    errors: [[400, CODES.cursorBeyondEnd]],
  },
  "GET /threads/:id/follow": {
    summary: "The event log as SSE, from `after` or `Last-Event-ID`.",
    query: FollowQuery,
    media: "sse",
    events: { message: { when: "each event of the log, in order; the frame's `id` is its seq", data: LoggedEvent } },
    errors: [
      [400, CODES.cursorBeyondEnd],
      [400, CODES.invalidHeader],
    ],
  },
  "GET /threads/:id/stream": {
    summary: "Live deltas of the running turn as SSE; nothing is stored.",
    media: "sse",
    events: {
      delta: { when: "live output of the running turn", data: StreamDelta },
      gap: { when: "after deltas a slow reader missed", data: StreamGap },
    },
    errors: [[429, CODES.streamSubscribersFull]],
  },
  "GET /threads/:id/agui": {
    summary: "The thread as AG-UI events over SSE (docs/agui.md): the log, then live events and text deltas, from `after` or `Last-Event-ID`.",
    query: FollowQuery,
    media: "sse",
    events: {
      message: {
        when: "each AG-UI event; the last of a log event's frames has `id: <seq>`, frames from no stored event (text deltas, a run reopened for a reader joining mid-turn) have none",
        data: AguiEvent,
      },
    },
    errors: [
      [400, CODES.cursorBeyondEnd],
      [400, CODES.invalidHeader],
    ],
  },
  "GET /threads/:id/agui-page": {
    summary: "One reverse page of the log as AG-UI frames: `before` (default: past the newest), `limit` (default 200, max 1000).",
    query: AguiPageQuery,
    answer: AguiPage,
  },
  "POST /threads/:id/agui": {
    summary: "An AG-UI run (`RunAgentInput`, as `HttpAgent` sends it): posts the new user messages, answers interrupts from `resume`, and streams the run until its turn ends or waits on a person.",
    body: RunAgentInput,
    media: "sse",
    events: { message: { when: "each AG-UI event of the run, from `RUN_STARTED` (the caller's `runId`) to `RUN_FINISHED` or `RUN_ERROR`", data: AguiEvent } },
    drains: true,
    errors: [
      ...ACCEPTS,
      ...BUSY,
      [400, CODES.aguiNothingToRun],
      [400, CODES.aguiResumeInvalid],
      [400, CODES.aguiMessageUnsupported],
      [409, CODES.aguiInterruptClosed],
      [409, CODES.idempotencyConflict],
    ],
  },
  "GET /threads/:id/tool-results/:seq": {
    summary: "A tool result's whole body.",
    answer: ToolResultBody,
    errors: [
      [404, CODES.eventNotFound],
      [404, CODES.notAToolResult],
    ],
  },

  "GET /threads/:id/attachments": { summary: "The thread's attachments, oldest first: name, media type, size, hash, the message's seq, where the engines find it.", answer: AttachmentList },
  "GET /threads/:id/attachments/:sha256": { summary: "One attachment whole, with its media type.", media: "binary", errors: [[404, CODES.attachmentNotFound]] },
  "POST /threads/:id/send": {
    summary: "Appends a message and answers when the turn it started ended (`async: true`: at once).",
    body: SendMessage,
    answer: SendResult,
    drains: true,
    also: [
      {
        status: 202,
        when: "No turn here answers the message now: outcome `queued` with `queuedBecause` (a seat on a peer answers it, or the thread went degraded or was retired while it waited); or `async: true`, the message's `{seq, ts}` at once.",
        answer: SendAccepted,
        codes: [CODES.seatElsewhere, CODES.threadDegraded, CODES.threadArchived],
      },
    ],
    errors: [...ACCEPTS, ...BUSY, ...SEAT_NAMED, ...ATTACHED, [400, CODES.messageEmpty], [409, CODES.recordOnlyThread]],
  },
  "GET /threads/:id/operations": { summary: "The thread's operations (delegations, subscription edges, long actions), oldest first, with their state.", answer: OperationList },
  "POST /threads/:id/operations": {
    summary: "Starts an operation; a delegation spawns its child (parent: this thread) and sends it the prompt. Honours an Idempotency-Key (a replay answers 200).",
    body: StartOperation,
    status: 201,
    answer: OperationAccepted,
    also: [{ status: 200, when: "An Idempotency-Key's replay: the first answer, `replayed: true`; nothing is started again." }],
    drains: true,
    errors: [...SPAWN_ERRORS, [400, CODES.invalidHeader], [409, CODES.idempotencyConflict], [503, CODES.blobStoreUnavailable]],
  },
  "GET /threads/:id/operations/:operation": { summary: "One operation with its milestones.", answer: OperationDetail, errors: [[404, CODES.operationNotFound]] },
  "POST /threads/:id/operations/:operation": {
    summary: "Reports a milestone or the one outcome; a second outcome is 409 operation-settled. Honours an Idempotency-Key.",
    body: ReportOperation,
    answer: OperationAccepted,
    errors: [
      [404, CODES.operationNotFound],
      [409, CODES.operationSettled],
      [400, CODES.invalidHeader],
      [409, CODES.idempotencyConflict],
      [503, CODES.blobStoreUnavailable],
    ],
  },
  "GET /threads/:id/subscriptions": { summary: "What the thread watches: each subscription with its target, filter, note, delivery and wakes so far.", answer: SubscriptionList },
  "POST /threads/:id/subscriptions": {
    summary: "Watches a thread, or a workspace's threads, for events matching a filter; each match wakes this thread with a message.",
    body: Subscribe,
    status: 201,
    answer: Subscription,
    errors: [
      [404, CODES.watchTargetNotFound],
      [503, CODES.watchFailed],
      [404, CODES.workspaceNotFound],
      [404, CODES.seatNotFound],
      [409, CODES.threadArchived],
    ],
  },
  "DELETE /threads/:id/subscriptions/:watch": { summary: "Removes a subscription; no wake of it is taken after.", answer: Subscription, errors: [[404, CODES.subscriptionNotFound]] },
  "POST /threads/:id/events": { summary: "Records a cycle event of a review or merge flow (`cycle` in the log).", body: CycleEvent, status: 201, answer: MessageAccepted, errors: [[503, CODES.blobStoreUnavailable]] },
  "POST /threads/:id/gate": {
    summary: "Asks a gate: `auto` decides from the thread's children and the checks, `human` opens an approval and answers once a person decided. A refusal is a 200 with `passed: false` and `reasons`.",
    body: GateRequest,
    answer: GateResult,
  },
  "POST /threads/:id/merge": {
    summary: "Merges a child's work (the head of its working directory) into this thread's checkout with git; again answers `alreadyMerged`.",
    body: MergeRequest,
    answer: MergeResult,
    errors: [
      [404, CODES.notAChild],
      [409, CODES.noCheckout],
      [409, CODES.mergeConflict],
      [409, CODES.mergeFailed],
      [503, CODES.sandboxUnavailable],
      [503, CODES.engineHostUnavailable],
    ],
  },
  "GET /threads/:id/steering": { summary: "Every message sent to steer a running turn, oldest first: the turn it steered and whether the engine took it.", answer: SteeringList },
  "GET /threads/:id/seats": { summary: "The thread's seats: engine, model, placement, role, state, whether it holds the thread, where it joined and was replaced.", answer: SeatList },
  "POST /threads/:id/seats": {
    summary: "Joins a seat, with a spawn's rules for its engine and model.",
    body: JoinSeat,
    status: 201,
    answer: Seat,
    drains: true,
    errors: [...SEAT_TARGET, [409, CODES.seatExists], [409, CODES.threadArchived]],
  },
  "POST /threads/:id/seats/replace": {
    summary: "Changes a seat's engine, model or placement; `changed: false`, and nothing written, when nothing differs.",
    body: ReplaceSeat,
    answer: ReplaceResult,
    errors: [...SEAT_TARGET, ...SEAT_NAMED, [409, CODES.threadArchived]],
  },
  "DELETE /threads/:id/seats/:name": {
    summary: "Removes a seat: its running turn fails with class `closed`; its history stays.",
    answer: SeatRemoved,
    errors: [...SEAT_NAMED, [409, CODES.lastSeat], [409, CODES.threadArchived]],
  },
  "POST /threads/:id/handoff": {
    summary: "Offers the thread to another seat; the offer is the seq of its event (`fromSeq`).",
    body: OfferHandoff,
    status: 201,
    answer: HandoffOffered,
    errors: [...SEAT_NAMED, [409, CODES.seatHoldsThread], [409, CODES.handoffPending], [409, CODES.threadArchived]],
  },
  "GET /threads/:id/handoffs": { summary: "Every handoff offer, oldest first, with its state.", answer: HandoffList },
  "POST /threads/:id/handoffs/:fromSeq/accept": {
    summary: "Accepts an offer: its target holds the thread (with `context: summary`, from a summary the curator writes now).",
    answer: Handoff,
    errors: [...HANDOFF_ANSWER, [503, CODES.summaryUnavailable]],
  },
  "POST /threads/:id/handoffs/:fromSeq/decline": { summary: "Declines an offer; nothing else changes.", answer: Handoff, errors: HANDOFF_ANSWER },
  "GET /threads/:id/turn": { summary: "The running turn and what it waits on.", answer: TurnStatus },
  "POST /threads/:id/interrupt": { summary: "Interrupts the running turn; answers once it ended.", answer: TurnResult, errors: [[409, CODES.noTurnRunning]] },
  "GET /threads/:id/compact": { summary: "The context window: tokens in context, the window, both lines, any pending window, the last reduction, recent refusals.", answer: CompactionStatus },
  "POST /threads/:id/compact": {
    summary: "Reduces the context now, with `mode` or the runtime's choice (cheapest first); settles a forced window.",
    body: CompactRequest,
    answer: CompactResult,
    errors: [
      [409, CODES.engineBusy],
      [409, CODES.windowBlocked],
      [409, CODES.threadArchived],
      [503, CODES.threadDegraded],
      [409, CODES.recordOnlyThread],
    ],
  },
  "POST /threads/:id/approvals/:approvalId": {
    summary: "Allows or denies a tool call; a second answer is a 200 with code `approval-closed`.",
    body: ApprovalDecisionBody,
    answer: ApprovalResolved,
    errors: [
      [404, CODES.approvalNotFound],
      [200, CODES.approvalClosed],
    ],
  },
  "GET /threads/:id/questions/:requestId": { summary: "A question the engine asked, and its status.", answer: QuestionStatus, errors: [[404, CODES.questionNotFound]] },
  "POST /threads/:id/questions/:requestId/answer": { summary: "Answers a question.", body: QuestionAnswerBody, answer: QuestionStatus, errors: QUESTION },
  "POST /threads/:id/questions/:requestId/dismiss": { summary: "Dismisses a question: the turn ends without another model call.", answer: QuestionStatus, errors: QUESTION },
  "POST /threads/:id/questions/:requestId/continue": { summary: "The model goes on without an answer.", answer: QuestionStatus, errors: QUESTION },
  "POST /threads/:id/ui/generate": {
    summary:
      "Generates an interface for the thread: a component tree of the catalog (docs/ui.md), written by `SERVICE_UI_MODEL` when one is set (asked again once when the catalog refuses its tree), else by the template from the thread's state; stored as an `interface` event.",
    body: GenerateInterface,
    answer: GeneratedInterface,
    drains: true,
    errors: [
      [409, CODES.threadArchived],
      [409, CODES.uiModelNotConfigured],
      [502, CODES.uiModelInvalid],
      [503, CODES.uiModelUnavailable],
      [503, CODES.blobStoreUnavailable],
    ],
  },
  "POST /threads/:id/role": { summary: "Retires a head to chat and frees the workspace's head slot.", body: RoleChange, answer: MessageAccepted, errors: [[409, CODES.notAHead]] },
  "POST /threads/:id/recover": {
    summary: "Reopens a degraded thread, acknowledging the gap in its history.",
    body: RecoverBody,
    answer: MessageAccepted,
    errors: [[409, CODES.threadNotDegraded]],
  },
  "POST /threads/:id/fork": {
    summary: "A new thread with this one's history up to `atSeq`.",
    body: ForkBody,
    status: 201,
    answer: ForkResult,
    drains: true,
    errors: [...SPAWN_ERRORS, [400, CODES.forkSeqOutOfRange]],
  },
  "GET /threads/:id/loop": { summary: "The thread's loop, if any.", answer: ThreadLoop },
  "POST /threads/:id/loop": {
    summary: "Starts a loop: one prompt queued again after each turn until a stop rule.",
    body: LoopStart,
    status: 202,
    answer: LoopState,
    drains: true,
    errors: [
      [409, CODES.loopRunning],
      [409, CODES.recordOnlyThread],
    ],
  },
  "POST /threads/:id/loop/continue": {
    summary: "Continues a stopped loop for more turns.",
    body: LoopContinue,
    status: 202,
    answer: LoopState,
    drains: true,
    errors: [
      [404, CODES.loopNotFound],
      [409, CODES.loopRunning],
    ],
  },
  "POST /threads/:id/loop/stop": {
    summary: "Stops the loop after the running turn.",
    answer: LoopState,
    errors: [
      [404, CODES.loopNotFound],
      [409, CODES.loopNotRunning],
    ],
  },

  "GET /workspaces": { summary: "The configured workspaces.", answer: WorkspaceList },
  "GET /workspaces/:name": { summary: "A workspace's configuration, its policy in force and its head thread.", answer: WorkspaceView, errors: WORKSPACE },
  "PUT /workspaces/:name/policy": {
    summary: "Sets the workspace's policy; kept across restarts, over the file's.",
    body: Policy,
    answer: PolicySet,
    errors: [...WORKSPACE, [400, CODES.modelNotAllowed], [400, CODES.modelNotFound], [400, CODES.accountNotInRoster], [400, CODES.unknownAccount]],
  },
  "GET /workspaces/:name/head": { summary: "The workspace's head thread.", answer: WorkspaceHead, errors: WORKSPACE },
  "GET /workspaces/:name/approvals": { summary: "Approvals open in the workspace's threads.", answer: WorkspaceApprovals, errors: WORKSPACE },
  "GET /workspaces/:name/questions": { summary: "Questions open in the workspace's threads.", answer: WorkspaceQuestions, errors: WORKSPACE },
  "GET /workspaces/:name/events": {
    summary: "Every entry of the workspace's feed, as SSE.",
    query: FollowQuery,
    media: "sse",
    events: { message: { when: "each entry of the feed, in order; the frame's `id` is its feed seq", data: FeedEntry } },
    errors: [...WORKSPACE, [400, CODES.cursorBeyondEnd], [400, CODES.invalidHeader]] },
  "GET /workspaces/:name/changes": {
    summary: "The feed's entries that change threads, as SSE; `threads` names the ones to watch.",
    query: FollowQuery.extend({ threads: z.string().optional() }),
    media: "sse",
    events: { message: { when: "each entry that changes a watched thread; the frame's `id` is its feed seq", data: FeedEntry } },
    errors: WORKSPACE,
  },
  "GET /workspaces/:name/tail": { summary: "A page of the workspace's feed.", query: TailQuery, answer: z.union([FeedForwardPage, FeedReversePage]), errors: [...WORKSPACE, [400, CODES.cursorBeyondEnd]] },
  "POST /workspaces/:name/memory/retain": {
    summary: "Stores a memory (201), or finds the same text kept already (200, `duplicate`); a `key` or `supersedes` retires what it replaces, in the same write.",
    body: Retain,
    status: 201,
    answer: Retained,
    also: [{ status: 200, when: "The same text was kept already: `duplicate: true`, its id." }],
    errors: [...WORKSPACE, [404, CODES.memoryNotFound], [409, CODES.memoryRetired], [404, CODES.threadNotFound], [400, CODES.workspaceMismatch], [400, CODES.eventNotFound], [413, CODES.memoryTooLarge], [503, CODES.memoryStoreFailed]],
  },
  "POST /workspaces/:name/memory/recall": { summary: "The memories that best fill a token budget for a query: text relevance with importance and recency as boosts (docs/memory.md).", body: Recall, answer: Recalled, errors: WORKSPACE },
  "POST /workspaces/:name/memory/reflect": {
    summary: "The curator model's reflections on the newest memories, each citing the memories it rests on.",
    body: Reflect,
    answer: Reflected,
    errors: [...WORKSPACE, [503, CODES.reflectUnavailable]],
  },
  "GET /workspaces/:name/memory": { summary: "A page of the workspace's memories, newest first, with filters.", query: MemoryQuery, answer: MemoryPage, errors: WORKSPACE },
  "GET /workspaces/:name/memory/:id": { summary: "One memory.", answer: Memory, errors: [...WORKSPACE, [404, CODES.memoryNotFound]] },
  "PATCH /workspaces/:name/memory/:id": {
    summary: "A person's correction in place: text, key, tags, importance, or retired.",
    body: EditMemory,
    answer: Memory,
    errors: [...WORKSPACE, [404, CODES.memoryNotFound], [409, CODES.memoryDuplicate], [413, CODES.memoryTooLarge]],
  },
  "DELETE /workspaces/:name/memory/:id": { summary: "Forgets a memory for good.", answer: MemoryForgotten, errors: [...WORKSPACE, [404, CODES.memoryNotFound]] },
  "GET /threads/:id/memory": { summary: "The memories retained from this thread, retired ones included unless asked otherwise.", query: ThreadMemoryQuery, answer: MemoryPage },

  "GET /code/roots": { summary: "The registered repositories: name, path, the workspace that registered it, branch and head commit.", answer: CodeRoots, errors: [[503, CODES.codeServiceUnavailable]] },
  "GET /code/files": {
    summary: "A page of the tracked files under a path of a root, sorted, with a glob.",
    query: FilesQuery,
    answer: FilesPage,
    errors: [[404, CODES.codeRootNotFound], [400, CODES.codePathFenced], [404, CODES.codePathNotFound], [409, CODES.codeRootNotGit], [400, CODES.codeGlobInvalid], [503, CODES.codeGitFailed], [503, CODES.codeServiceUnavailable]],
  },
  "GET /code/read": {
    summary: "A line range of one file, with its line count and git blob hash; cut at a size cap with `truncated`.",
    query: ReadQuery,
    answer: ReadAnswer,
    errors: [[404, CODES.codeRootNotFound], [400, CODES.codePathFenced], [404, CODES.codePathNotFound], [400, CODES.codePathNotFile], [413, CODES.codeFileTooLarge], [415, CODES.codeFileBinary], [400, CODES.codeRangeOutside], [400, CODES.codeRangeReversed], [403, CODES.codePathDenied], [500, CODES.codeReadFailed], [503, CODES.codeServiceUnavailable]],
  },
  "GET /code/outline": {
    summary: "The symbols of a file (name, kind, range, parent, signature), parsed with tree-sitter.",
    query: OutlineQuery,
    answer: OutlineAnswer,
    errors: [[404, CODES.codeRootNotFound], [400, CODES.codePathFenced], [404, CODES.codePathNotFound], [400, CODES.codePathNotFile], [403, CODES.codePathDenied], [415, CODES.codeLanguageUnknown], [413, CODES.codeFileTooLarge], [422, CODES.codeParseFailed], [503, CODES.codeServiceUnavailable]],
  },
  "POST /code/search": {
    summary: "A literal or regular-expression search over one root or all, with ripgrep.",
    body: SearchBody,
    answer: SearchAnswer,
    errors: [[404, CODES.codeRootNotFound], [400, CODES.codeSearchInvalid], [400, CODES.codeGlobInvalid], [503, CODES.codeGitFailed], [504, CODES.codeSearchTimeout], [503, CODES.codeSearchUnavailable], [503, CODES.codeServiceUnavailable]],
  },

  "GET /github/:owner/:repo/prs": {
    summary: "A page of the repository's pull requests on the code host (open by default), newest first.",
    query: PullsQuery,
    answer: PullsPage,
    errors: CODE_HOST,
  },
  "GET /github/:owner/:repo/prs/:number/diff": {
    summary: "A page of the files a pull request changes, each with its patch and hunk ranges, and the head and base it compares.",
    query: PageQuery,
    answer: DiffPage,
    errors: CODE_HOST,
  },
  "GET /github/:owner/:repo/prs/:number/comments": {
    summary: "A page of a pull request's conversation comments, then its review comments, then its reviews.",
    query: CommentsQuery,
    answer: CommentsPage,
    errors: CODE_HOST,
  },
  "GET /github/:owner/:repo/prs/:number/checks": { summary: "A page of the check runs on a pull request's head commit.", query: PageQuery, answer: ChecksPage, errors: CODE_HOST },
  "POST /github/overlap": {
    summary: "One duplicate-work pass over a repository's open pull requests: the pairs found, their score and evidence, and what it does about them (a dry run unless SERVICE_PR_OVERLAP=on).",
    body: OverlapBody,
    answer: OverlapAnswer,
    errors: CODE_HOST,
  },

  "POST /workspaces/:name/rooms": {
    answer: RoomOnly,
    summary: "Arms a review room for a pull request (201), or adopts the workspace's room for it (200, the same id; the key is workspace, repository and number): its thread, in a read-only worktree at the head, with the reviewer seat (docs/rooms.md).",
    body: ArmRoom,
    status: 201,
    also: [{ status: 200, when: "The workspace has a room for this pull request already: adopted, the same `room.id`." }],
    drains: true,
    errors: [...WORKSPACE, ...CODE_HOST, ...SPAWN_ERRORS, [502, CODES.gitFetchFailed]],
  },
  "GET /workspaces/:name/rooms": { summary: "A pull request's room and its newest round (null before the first).", query: RoomQuery, answer: RoomFound, errors: [...WORKSPACE, [404, CODES.roomNotFound]] },
  "GET /rooms/capabilities": { summary: "Whether the verdict poster is available: a code-host account (or the simulator) that may post reviews; the reason names the account.", answer: Capabilities },
  "GET /rooms/:id": { summary: "The room: its pull request, state, thread, seats and rounds.", answer: RoomOnly, errors: [[404, CODES.roomNotFound]] },
  "POST /rooms/:id/rounds": {
    answer: RoundOnly,
    summary: "Starts round n+1: the worktree moves to the pull request's head and the reviewer seat is asked for its verdict, which it returns with the submit_verdict tool.",
    body: StartRound,
    status: 202,
    drains: true,
    errors: [
      [404, CODES.roomNotFound],
      [404, CODES.seatNotFound],
      [409, CODES.roomNotArmed],
      [409, CODES.roundRunning],
      [409, CODES.reviewerBusy],
      [409, CODES.threadArchived],
      [502, CODES.gitFetchFailed],
      ...CODE_HOST,
    ],
  },
  "GET /rooms/:id/rounds/:n": { summary: "One round: its state, prompt, seat, head and base, thread, verdict (findings with fingerprints) and posted review.", answer: RoundOnly, errors: [[404, CODES.roomNotFound], [404, CODES.roundNotFound]] },
  "POST /rooms/:id/finalize": {
    answer: ReviewPosted,
    summary: "Posts a round's verdict (default: the newest round) as one review on the code host at the round's head; findings outside the diff go in its body, findings already on an unresolved thread are skipped.",
    body: Finalize,
    errors: [
      [404, CODES.roomNotFound],
      [404, CODES.roundNotFound],
      [409, CODES.verdictNotReady],
      [409, CODES.roundSuperseded],
      [409, CODES.roundStale],
      [409, CODES.roundFinalizing],
      [409, CODES.reviewOwnPullRequest],
      ...CODE_HOST,
    ],
  },
  "POST /workspaces/:name/prs/:number/agents": {
    answer: BuildThread,
    summary: "Starts a build thread in a runtime-owned worktree of the pull request's branch at its head, with the pull request as context in its first message.",
    body: BuildAgent,
    status: 201,
    drains: true,
    errors: [...WORKSPACE, ...CODE_HOST, ...SPAWN_ERRORS, [409, CODES.buildSeatsFull], [502, CODES.gitFetchFailed]],
  },
  "GET /workspaces/:name/prs/:number/receipt": {
    answer: Receipt,
    summary: "The read-only merge receipt: the verdict and checks at the exact head, the base chain, the stacked pull requests, the merge plan and what blocks it. It never merges.",
    query: ReceiptQuery,
    errors: [...WORKSPACE, ...CODE_HOST],
  },
  "GET /metrics/cost-per-merged-pr": { summary: "What the threads that worked on each pull request cost (reviewers, builders, their delegations), and per merged pull request as the code host reports it merged.", answer: CostPerMergedPr },

  "POST /internal/boot-sweep": { summary: "The front's boot sweep of turns a restart lost (the front only).", answer: BootSweep, errors: [[403, CODES.internalOnly]] },
  "POST /internal/tools": {
    summary: "A running turn's call of one of the runtime's tools, from the engine host (the front only; docs/tools.md).",
    body: RuntimeToolCall,
    answer: RuntimeToolResult,
    // Besides these, each tool answers its route's refusals (a spawn's for delegate, a subscription's, a handoff's).
    errors: [
      [409, CODES.noRoundRunning],
      [403, CODES.internalOnly],
      [403, CODES.watchOutOfScope],
      [404, CODES.threadNotFound],
      [409, CODES.turnNotRunning],
      [409, CODES.seatNotHolder],
      [409, CODES.notDelegated],
      [409, CODES.operationSettled],
      [409, CODES.delegationTooDeep],
      [409, CODES.handoffPending],
      [503, CODES.draining],
      [503, CODES.delegationFailed],
    ],
  },
  "POST /internal/host-report": { summary: "The front's disk and machine report (the front only).", body: HostReportBody, answer: SpawnPause, errors: [[403, CODES.internalOnly]] },

  "GET /accounts": {
    summary: "Provider accounts with their identity and health, and the engines' CLIs; never a secret.",
    answer: AccountList,
    errors: [
      [503, CODES.engineHostUnavailable],
      [503, CODES.accountPoolUnavailable],
    ],
  },
  "POST /accounts/:id/access-token": {
    summary: "A short-lived access token of an OAuth account, for a trusted caller on this host (never a browser page).",
    answer: AccessToken,
    localOnly: true,
    errors: [
      [404, CODES.accountNotFound],
      [429, CODES.accessTokenRateLimited],
      [409, CODES.credentialNotAvailable],
      [503, CODES.credentialUnreachable],
    ],
  },
  "POST /accounts/:id/engine-b/credit-reset": {
    summary: "Clears an account's spent engine_b allowance, so the next engine_b turn may run on it at once (after the operator bought credit). Local callers only.",
    answer: EngineBCreditReset,
    localOnly: true,
    errors: [
      [404, CODES.accountNotFound],
      [503, CODES.accountPoolUnavailable],
    ],
  },
  "DELETE /accounts/:id/model-refusals/:model": {
    summary: "Clears the provider's refusal of one model recorded against an account, so turns of that model may run on it again. Local callers only.",
    answer: ModelRefusalCleared,
    localOnly: true,
    errors: [
      [404, CODES.accountNotFound],
      [404, CODES.modelRefusalNotFound],
      [503, CODES.accountPoolUnavailable],
    ],
  },
  "GET /v1/models": { summary: "The models completions can route (OpenAI's list shape).", answer: ModelList, completionsErrors: true, errors: [[503, COMPLETIONS_CODES.accountPoolUnavailable]] },
  "GET /v1/models/:id": {
    summary: "One routable model.",
    answer: ModelEntry,
    completionsErrors: true,
    errors: [
      [404, COMPLETIONS_CODES.modelNotFound],
      [503, COMPLETIONS_CODES.accountPoolUnavailable],
    ],
  },
  "POST /v1/chat/completions": {
    summary: "One model call on the workspace's accounts, with failover (OpenAI's chat-completions shape).",
    body: ChatCompletionRequest,
    answer: ChatCompletion,
    media: "json-or-sse",
    events: {
      message: {
        when: "with `stream: true`, each chunk of the answer; then the text `[DONE]`, or OpenAI's error object when the call failed midway",
        data: z.union([ChatCompletionChunk, ChatCompletionStreamError]),
      },
    },
    completionsErrors: true,
    errors: COMPLETIONS,
  },

  "GET /keeper/spawn-pause": { summary: "The disk keeper's spawn pause.", answer: SpawnPause },
  "POST /keeper/spawn-pause/clear": { summary: "Clears a spawn pause early, with a reason.", body: ClearSpawnPause, answer: SpawnPause },
  "GET /host-load": { summary: "The machine's load as the front measured it.", answer: HostLoad, errors: [[503, CODES.hostLoadUnknown]] },
  "GET /live": { summary: "Live sessions and account-exhaustion episodes.", answer: Live },
  "GET /limits": { summary: "The host's limits, with the hub's build seat limit.", answer: Limits },
  "GET /timings": { summary: "Per-route request timings.", answer: Timings },
  "GET /metrics": { summary: "Metrics as JSON, or as Prometheus text when asked.", media: "json-or-prometheus", answer: Metrics },
  "GET /metrics/history": { summary: "Metrics over time.", query: SinceQuery, answer: MetricsHistory },
  "GET /metrics/estate": { summary: "Threads by stage, workspace and engine.", answer: Estate },
  "GET /metrics/keeper": { summary: "The disk keeper's samples.", answer: KeeperMetrics },

  "GET /attention": { summary: "Items that need a person now.", answer: AttentionBoard },
  "GET /attention/changes": { summary: "Changes of the attention board after a cursor.", query: FollowQuery.extend({ limit: z.string().regex(/^\d+$/).optional() }), answer: AttentionChanges },
  "GET /attention/follow": {
    summary: "Changes of the attention board as SSE.",
    query: FollowQuery,
    media: "sse",
    events: { message: { when: "each change of the board; the frame's `id` is its seq", data: AttentionChange } },
  },
  "GET /attention/:id": { summary: "One open attention item.", answer: AttentionItem, errors: [[404, CODES.attentionNotFound]] },

  "GET /peers": { summary: "This host and the external peers an operator registered.", answer: PeerList },
  "POST /peers/external": { summary: "Registers an external peer.", body: ExternalPeerBody, status: 201, answer: ExternalPeer, errors: [[409, CODES.peerExists]] },
  "DELETE /peers/external/:name": { summary: "Removes an external peer.", answer: Removed, errors: [[404, CODES.peerNotFound]] },

  "POST /previews": { summary: "Records a local server preview of a thread.", body: PreviewBody, status: 201, answer: Preview, errors: [[404, CODES.threadNotFound]] },
  "GET /previews": { summary: "The recorded previews.", answer: PreviewList },
  "GET /previews/:id": { summary: "One preview.", answer: Preview, errors: [[404, CODES.previewNotFound]] },
  "DELETE /previews/:id": { summary: "Removes a preview.", answer: Removed, errors: [[404, CODES.previewNotFound]] },
} satisfies Record<`${Method} /${string}`, RouteContract>;

/** A route as the contract names it: `METHOD /path`, with hono's `:param`s. */
export type RouteKey = keyof typeof DECLARED;
/** One route's declaration, with its own schemas' types. */
export type Declared<K extends RouteKey> = (typeof DECLARED)[K];

/** Every route, each as a `RouteContract`: what the document, the tests and the client read. */
export const CONTRACT: Readonly<Record<RouteKey, RouteContract>> = DECLARED;
