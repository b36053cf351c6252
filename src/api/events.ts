/**
 * The durable event log's envelope and the kinds written today.
 * docs/events.md describes each kind and the ones later issues add.
 */
import * as z from "zod";
import type { CompactionDispositionBody, WindowBody, WindowPendingBody } from "./compaction.js";
import type { CompletionEventBody } from "./completions.js";
import type { ApprovalDecision, FailureClass, Json, QuestionAction, TranscriptEntry, TurnStop } from "./engine.js";
import type { HandoffContext, Placement } from "./seats.js";
import type { AttachmentRef } from "./attachments.js";
import type { OperationKind, OperationOutcome } from "./operations.js";
import type { CycleKind } from "./cycles.js";
import type { Engine, OnBusy, ShownSpec } from "./threads.js";
import type { LOOP_STOPS } from "./turns.js";
import type { InterfaceSource, UiNode } from "./ui.js";

export interface SpawnBody {
  /** Every default filled in; `proxyEnv` by its variable names only. */
  spec: ShownSpec;
}

export interface MessageBody {
  text: string;
  /** A program that sent text no person typed. */
  from?: string;
  /** The AG-UI client's own id for a message posted through `POST /threads/:id/agui` (`from: "ag-ui"`). */
  clientMessageId?: string;
  hold?: boolean;
  /** What the sender asked the message to do if a turn was running (absent: the thread's default). */
  onBusy?: OnBusy;
  /** The seat the message is for (absent: the seat that holds the thread). */
  seat?: string;
  /** Its attachments, by hash: the bytes are in the blob store (`GET /threads/:id/attachments/:sha256`). */
  attachments?: AttachmentRef[];
  /** A wake message: the subscription, the watched thread, its events, and how many wakes led here. */
  wake?: { watch: string; source: string; seqs: number[]; depth: number };
}

export interface MessageEditedBody {
  /** seq of the held message that was edited. */
  target: number;
  text: string;
}

export interface MessageDeletedBody {
  target: number;
}

export interface MessageReleasedBody {
  target: number;
}

export interface ArchiveBody {
  reason: string | null;
}

export type RestoreBody = Record<string, never>;

export interface SeatLeaseBody {
  seatLease: string | null;
}

/** A tool's result as the log keeps it; `GET /threads/:id/tool-results/:seq` answers it whole. */
export const ToolResultBody = z.object({
  turnId: z.string().optional(),
  callId: z.string(),
  name: z.string(),
  output: z.string(),
  isError: z.boolean().optional(),
  /** The blob key of an output that could not be saved (the thread went degraded). */
  lost: z.string().optional(),
});
export type ToolResultBody = z.infer<typeof ToolResultBody>;

export interface TurnStartedBody {
  turnId: string;
  /** 1 for the thread's first turn. */
  index: number;
  /** seqs of the messages this turn answers, in order. */
  inputs: number[];
  /** The seat whose turn it is, and the engine and model it runs on. */
  seat?: string;
  engine?: Engine;
  model?: string;
  /** How many subscription wakes led to this turn, when any did (docs/subscriptions.md, loops). */
  wakeDepth?: number;
}

export interface ReplyBody {
  turnId: string;
  text: string;
  lost?: string;
}

export interface ToolCallBody {
  turnId: string;
  callId: string;
  name: string;
  input: Json;
}

export interface ApprovalRequestBody {
  turnId: string;
  approvalId: string;
  callId: string;
  name: string;
  input: Json;
}

export interface ApprovalResolvedBody {
  approvalId: string;
  /** `cancelled` when the turn ended before anyone answered. */
  decision: ApprovalDecision | "cancelled";
  /** Nobody answered within the thread's `approvalTimeoutMs`: resolved as a deny. */
  expired?: true;
}

export interface QuestionBody {
  turnId: string;
  requestId: string;
  question: string;
}

export interface QuestionResolvedBody {
  requestId: string;
  action: QuestionAction | "cancelled";
  answer?: string;
  /** Nobody answered within the thread's `questionTimeoutMs`: dismissed. */
  expired?: true;
}

export interface UsageBody {
  turnId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** null: the model has no price in the engine's catalog, so the call's cost is unknown. */
  usd: number | null;
}

export interface TurnEndedBody {
  turnId: string;
  /** Present when the model's output limit cut the turn's last message. */
  stop?: TurnStop;
}

export interface TurnFailedBody {
  turnId: string;
  class: FailureClass;
  error: string;
}

/** A line from the runtime itself, such as `This turn was lost to a host restart`. */
export interface SystemBody {
  level: "info" | "error";
  text: string;
  turnId?: string;
}

/** What became of a message sent to steer a running turn (`onBusy: "steer"`). */
export interface SteeredBody {
  /** The message: the seq of its `message` event. */
  target: number;
  turnId: string;
  /** True: it joined the running turn's conversation. False: the next turn answers it instead. */
  taken: boolean;
  reason?: string;
}

export interface CycleBody {
  cycle: CycleKind;
  step?: string;
  child?: string;
  status?: string;
  text?: string;
  data?: Json;
}

export interface GateBody {
  gate: string;
  mode: "auto" | "human";
  step: string | null;
  passed: boolean;
  reasons: string[];
  approvalId?: string;
}

export interface MergeBody {
  child: string;
  head: string;
  commit: string | null;
  alreadyMerged: boolean;
}

/** Written out here: src/api/subscriptions.ts takes the event kinds from this file. */
export interface SubscriptionAddedBody {
  watch: string;
  target: { thread: string } | { workspace: string };
  filter: { kinds?: EventKind[]; text?: string };
  note: string | null;
  deliver: { seat: string } | null;
}

export interface SubscriptionRemovedBody {
  watch: string;
}

export interface OperationStartedBody {
  operation: string;
  kind: OperationKind;
  title: string;
  /** A delegation's child thread, and the prompt it was sent. */
  child?: string;
  prompt?: string;
  detail?: Record<string, Json>;
}

export interface OperationMilestoneBody {
  operation: string;
  text: string;
  data?: Json;
}

export interface OperationSettledBody extends OperationOutcome {
  operation: string;
  /** `child`: a delegation's child reported it, by ending its turn. */
  by: "caller" | "child";
}

/** A seat as its events describe it. */
export interface SeatShape {
  engine: Engine;
  model: string;
  placement: Placement;
}

export interface SeatJoinedBody extends SeatShape {
  seat: string;
  role: string | null;
}

export interface SeatReplacedBody {
  seat: string;
  from: SeatShape;
  to: SeatShape;
}

export interface SeatRemovedBody {
  seat: string;
  /** The seat that holds the thread after the removal. */
  holder: string;
  /** The seat's running turn, ended with class `closed`. */
  turnId?: string;
}

export interface HandoffOfferedBody {
  from: string;
  to: string;
  note: string | null;
  context: HandoffContext;
  offeredBy: "caller" | "engine";
  /** The engine's turn that offered it. */
  turnId?: string;
}

export interface HandoffAnsweredBody {
  /** The offer: the seq of its `handoff-offered`. */
  fromSeq: number;
  /** `cancelled` only: why (a seat of the offer was removed, another offer replaced it, nobody answered in time). */
  reason?: string;
  /** `cancelled` only: nobody answered within `SERVICE_HANDOFF_TIMEOUT_MS`. */
  expired?: true;
  /** `accepted` with `context: "summary"`: the summary the new holder starts from, and the model that wrote it. */
  summary?: string;
  summaryModel?: string;
}

/** First event after `spawn` in a forked thread: the parent's conversation up to `atSeq`. */
export interface ForkBody {
  parent: string;
  atSeq: number;
  transcript: TranscriptEntry[];
}

/** A body of a turn could not be saved; the thread refuses turns until recovered. */
export interface DegradedBody {
  key: string;
  index: number;
  tag: string;
  error: string;
}

export interface RecoveredBody {
  reason: string;
  acknowledgeHistoryGap: true;
}

/** A turn failed for lack of allowance or login; the thread moves along its fallback chain and retries its messages. */
export interface FailoverBody {
  turnId: string;
  class: FailureClass;
  from: { engine: string; model: string };
  to: { engine: string; model: string };
  /** The messages the next turn answers again. */
  inputs: number[];
}

/** `POST /threads/:id/role`: a head retired to chat. */
export interface RoleBody {
  from: "head";
  to: "chat";
}

export interface LoopStartedBody {
  prompt: string;
  maxTurns: number;
  until: string | null;
}

export interface LoopContinuedBody {
  turns: number;
}

export interface LoopStoppedBody {
  reason: (typeof LOOP_STOPS)[number];
}

export interface EventBodies {
  spawn: SpawnBody;
  message: MessageBody;
  "message-edited": MessageEditedBody;
  "message-deleted": MessageDeletedBody;
  "message-released": MessageReleasedBody;
  archive: ArchiveBody;
  restore: RestoreBody;
  "seat-lease": SeatLeaseBody;
  "tool-result": ToolResultBody;
  "turn-started": TurnStartedBody;
  reply: ReplyBody;
  "tool-call": ToolCallBody;
  "approval-request": ApprovalRequestBody;
  "approval-resolved": ApprovalResolvedBody;
  question: QuestionBody;
  "question-resolved": QuestionResolvedBody;
  usage: UsageBody;
  "turn-ended": TurnEndedBody;
  "turn-failed": TurnFailedBody;
  system: SystemBody;
  fork: ForkBody;
  degraded: DegradedBody;
  recovered: RecoveredBody;
  failover: FailoverBody;
  role: RoleBody;
  "loop-started": LoopStartedBody;
  "loop-continued": LoopContinuedBody;
  "loop-stopped": LoopStoppedBody;
  window: WindowBody;
  "window-pending": WindowPendingBody;
  "compaction-disposition": CompactionDispositionBody;
  steered: SteeredBody;
  "operation-started": OperationStartedBody;
  "subscription-added": SubscriptionAddedBody;
  cycle: CycleBody;
  gate: GateBody;
  merge: MergeBody;
  "subscription-removed": SubscriptionRemovedBody;
  "operation-milestone": OperationMilestoneBody;
  "operation-settled": OperationSettledBody;
  "seat-joined": SeatJoinedBody;
  "seat-replaced": SeatReplacedBody;
  "seat-removed": SeatRemovedBody;
  "handoff-offered": HandoffOfferedBody;
  "handoff-accepted": HandoffAnsweredBody;
  "handoff-declined": HandoffAnsweredBody;
  "handoff-cancelled": HandoffAnsweredBody;
  /** One per completions call, on the workspace's completions thread. */
  completion: CompletionEventBody;
  "memory-retained": MemoryRetainedBody;
  "memory-recalled": MemoryRecalledBody;
  interface: InterfaceBody;
}

/**
 * A generated interface for the thread (`POST /threads/:id/ui/generate`, docs/ui.md): a
 * tree of the catalog's components, checked before it was stored. AG-UI clients get it as
 * `ACTIVITY_SNAPSHOT` (docs/agui.md), which reads `interfaceId`, `tree`, `source`, `model`.
 */
export interface InterfaceBody {
  interfaceId: string;
  source: InterfaceSource;
  /** The model that wrote it (`source: "model"`). */
  model?: string;
  tree: UiNode;
  /** The last event of the log the interface reflects. */
  basedOnSeq: number;
}

/**
 * A retain that named this thread as where the memory came from (docs/memory.md): which
 * memory, whether it was the same text as one kept already, what it retired. Not the
 * text: a memory a person forgets must not live on in a log.
 */
export interface MemoryRetainedBody {
  workspace: string;
  id: string;
  kind: string;
  key: string | null;
  tags: string[];
  /** The event the memory rests on, when the retain named one. */
  sourceSeq: number | null;
  duplicate: boolean;
  retired: string[];
}

/** A thread spawned with `recall`: what its first turn was given from the workspace's memory. */
export interface MemoryRecalledBody {
  turnId: string;
  ids: string[];
  usedTokens: number;
}

export type EventKind = keyof EventBodies;

export const EVENT_KINDS = [
  "spawn",
  "message",
  "message-edited",
  "message-deleted",
  "message-released",
  "archive",
  "restore",
  "seat-lease",
  "tool-result",
  "turn-started",
  "reply",
  "tool-call",
  "approval-request",
  "approval-resolved",
  "question",
  "question-resolved",
  "usage",
  "turn-ended",
  "turn-failed",
  "system",
  "fork",
  "degraded",
  "recovered",
  "failover",
  "role",
  "loop-started",
  "loop-continued",
  "loop-stopped",
  "window",
  "window-pending",
  "compaction-disposition",
  "steered",
  "operation-started",
  "subscription-added",
  "cycle",
  "gate",
  "merge",
  "subscription-removed",
  "operation-milestone",
  "operation-settled",
  "seat-joined",
  "seat-replaced",
  "seat-removed",
  "handoff-offered",
  "handoff-accepted",
  "handoff-declined",
  "handoff-cancelled",
  "completion",
  "memory-retained",
  "memory-recalled",
  "interface",
] as const satisfies readonly EventKind[];

/** A body stored apart from the log: the log keeps its SHA-256 and size. */
export const BlobRef = z.object({ sha256: z.string(), bytes: z.number().int().nonnegative() });
export type BlobRef = z.infer<typeof BlobRef>;

/** One event of a thread's log as the routes answer it; its `body` is the kind's (docs/events.md). */
export const LoggedEvent = z.object({
  seq: z.number().int().positive(),
  /** ISO-8601 UTC, millisecond precision. */
  ts: z.string(),
  kind: z.enum(EVENT_KINDS),
  body: z.unknown(),
  /** Present when the body lives in the blob store; `body` is still the full body. */
  blob: BlobRef.optional(),
});

export type ThreadEvent<K extends EventKind = EventKind> = K extends EventKind
  ? {
      seq: number;
      /** ISO-8601 UTC, millisecond precision. */
      ts: string;
      kind: K;
      body: EventBodies[K];
      /** Present when the body lives in the blob store; `body` is still the full body. */
      blob?: BlobRef;
    }
  : never;
