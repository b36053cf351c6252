/** Request and response shapes of the turn routes (SPEC "Start work", "Control a turn"). */
import * as z from "zod";
import { Attachments } from "./attachments.js";
import { APPROVAL_DECISIONS, FAILURE_CLASSES, TurnFailure, type Json } from "./engine.js";
import { MessageAccepted, ON_BUSY, SeatName, SpawnResult, SpawnSpec } from "./threads.js";

export const SendMessage = z
  .object({
    text: z.string(),
    from: z.string().min(1).max(200).refine((f) => f !== "loop" && f !== "runtime", "from: \"loop\" and \"runtime\" are reserved").optional(),
    /** Answer 202 at once, as `POST /messages` does. */
    async: z.boolean().optional(),
    onBusy: z.enum(ON_BUSY).optional(),
    seat: SeatName.optional(),
    attachments: Attachments.optional(),
  })
  .strict();
export type SendMessage = z.infer<typeof SendMessage>;

/**
 * Why no turn here answers the message (yet): the refusal a new message would get now
 * (`key`, `index`, `tag` for a degraded thread), or `seat-elsewhere` for a message whose
 * seat is placed on a peer, which answers it there.
 */
export const QueuedBecause = z.object({
  code: z.string(),
  error: z.string(),
  key: z.string().optional(),
  index: z.number().int().optional(),
  tag: z.string().optional(),
});
export type QueuedBecause = z.infer<typeof QueuedBecause>;

/** How a turn ended, as `interrupt` answers it; `queued` (no turn yet) only for a message `send` waited on. */
export const TurnResult = z.object({
  turnId: z.string().nullable(),
  outcome: z.enum(["completed", "failed", "queued"]),
  failure: TurnFailure.nullable(),
  /** The turn's last reply, or null when it wrote none. */
  reply: z.object({ seq: z.number().int().positive(), text: z.string() }).nullable(),
  /** Why a `queued` message waits: the refusal a new message would get now. */
  queuedBecause: QueuedBecause.optional(),
});
export type TurnResult = z.infer<typeof TurnResult>;

/**
 * `POST /threads/:id/send` once the turn that answered the message ended, or (202,
 * outcome `queued`) once it is clear no turn will take it for now: the thread went
 * degraded or was retired while the message waited. The message stays accepted and
 * queued; it runs after `recover` or `restore`. `seq` and `ts` are the message's.
 */
export const SendResult = MessageAccepted.extend(TurnResult.shape);
export type SendResult = z.infer<typeof SendResult>;

/** `POST /threads/:id/send`'s 202: a message no turn here answers now (`SendResult`, outcome `queued`), or, with `async: true`, the message's event at once. */
export const SendAccepted = z.union([SendResult, MessageAccepted]);

export const TurnStatus = z.object({
  running: z.boolean(),
  turn: z.object({ turnId: z.string(), index: z.number().int().positive(), startedAt: z.string(), inputs: z.array(z.number().int().positive()) }).nullable(),
  /** Open approvals and questions the running turn waits on. */
  waitingOn: z.object({ approvals: z.array(z.string()), questions: z.array(z.string()) }),
  /** Messages accepted and waiting for the next turn. */
  queued: z.number().int().nonnegative(),
});
export type TurnStatus = z.infer<typeof TurnStatus>;

export const ApprovalDecisionBody = z
  .object({ decision: z.enum(APPROVAL_DECISIONS, { message: "decision must be allow or deny" }) })
  .strict();

/** The `approval-resolved` event an answer wrote. */
export const ApprovalResolved = z.object({ approvalId: z.string(), decision: z.enum(APPROVAL_DECISIONS), seq: z.number().int().positive() });
export type ApprovalResolved = z.infer<typeof ApprovalResolved>;

export const QuestionAnswerBody = z.object({ answer: z.string().min(1).max(100_000) }).strict();

export const QUESTION_STATES = ["open", "answered", "dismissed", "continued", "cancelled"] as const;

export const QuestionStatus = z.object({
  requestId: z.string(),
  threadId: z.string(),
  turnId: z.string(),
  question: z.string(),
  status: z.enum(QUESTION_STATES),
  answer: z.string().nullable(),
  /** The event that asked, and the one that closed it. */
  seq: z.number().int().positive(),
  resolvedSeq: z.number().int().positive().nullable(),
});
export type QuestionStatus = z.infer<typeof QuestionStatus>;

export const RecoverBody = z
  .object({
    acknowledgeHistoryGap: z.literal(true, { message: "acknowledgeHistoryGap must be true: the missing history is not restored" }),
    reason: z.string().min(1).max(1000),
  })
  .strict();

/** `POST /threads/:id/role`: a head retires to chat; no other role change is accepted. */
export const RoleChange = z.object({ role: z.literal("chat", { message: "a head can only be retired to chat; no other role change is accepted" }) }).strict();

export const ForkBody = SpawnSpec.extend({ atSeq: z.number().int().positive() }).strict();
export type ForkBody = z.infer<typeof ForkBody>;

/** `POST /threads/:id/fork`: the new thread, and where it forked from. */
export const ForkResult = SpawnResult.extend({ parent: z.string(), atSeq: z.number().int().positive() });

/** The `from` of a loop's prompts; reserved, so no other message counts as a loop turn. */
export const LOOP_SENDER = "loop";

/** The `from` of the runtime's own messages, such as the nudge after a stalled turn. */
export const RUNTIME_SENDER = "runtime";

/** What the runtime sends when an engine ended a turn after a tool result without answering. */
export const STALLED_NUDGE = "Continue: you ran a tool and stopped without answering.";

export const LOOP_DEFAULT_TURNS = 10;
export const LOOP_MAX_TURNS = 1000;

export const LoopStart = z
  .object({
    prompt: z.string().min(1).max(100_000),
    /** Stop after this many turns (default 10). */
    maxTurns: z.number().int().min(1).max(LOOP_MAX_TURNS).optional(),
    /** Stop when a reply contains this text. */
    until: z.string().min(1).max(1000).optional(),
  })
  .strict();

export const LoopContinue = z
  .object({ turns: z.number().int().min(1).max(LOOP_MAX_TURNS).optional() })
  .strict();

export const LOOP_STATES = ["running", "paused", "stopped", "finished"] as const;

/** Why a loop is not running: `stopped` (asked), `until-matched`, `max-turns`, `turn-failed` (paused; /loop/continue resumes). */
export const LOOP_STOPS = ["stopped", "until-matched", "max-turns", "turn-failed"] as const;

export const LoopState = z.object({
  status: z.enum(LOOP_STATES),
  prompt: z.string(),
  maxTurns: z.number().int().positive(),
  until: z.string().nullable(),
  /** Turns the loop has run so far. */
  done: z.number().int().nonnegative(),
  reason: z.enum(LOOP_STOPS).nullable(),
});
export type LoopState = z.infer<typeof LoopState>;

/** `GET /threads/:id/loop`: null when the thread never ran one. */
export const ThreadLoop = z.object({ loop: LoopState.nullable() });

/** One group of `GET /incidents`. */
export const Incident = z.object({
  /** A turn's failure class, or `storage-full`: writes the full data volume refused (docs/operating.md, "A full disk"). */
  class: z.enum([...FAILURE_CLASSES, "storage-full"]),
  fingerprint: z.string(),
  /** The newest error text of the group. */
  message: z.string(),
  failures: z.number().int().positive(),
  threads: z.number().int().nonnegative(),
  threadIds: z.array(z.string()),
  firstAt: z.string(),
  lastAt: z.string(),
});
export type Incident = z.infer<typeof Incident>;

export interface PendingApproval {
  approvalId: string;
  threadId: string;
  turnId: string;
  seq: number;
  name: string;
  input: Json;
  openedAt: string;
}

export interface PendingQuestion {
  requestId: string;
  threadId: string;
  turnId: string;
  seq: number;
  question: string;
  openedAt: string;
}

/** Workspace of the approval and question index for threads spawned without one. */
export const DEFAULT_WORKSPACE = "default";

/** A message sent with `onBusy: "steer"` while a turn ran. */
export const SteeringEntry = z.object({
  /** The message's seq. */
  seq: z.number().int().positive(),
  /** The turn it was sent to steer. */
  turnId: z.string(),
  /** Whether the engine took it into that turn; null while it has not said. Not taken, the next turn answers it. */
  taken: z.boolean().nullable(),
  reason: z.string().nullable(),
  /** The `steered` event that settled it. */
  resolvedSeq: z.number().int().positive().nullable(),
});
export type SteeringEntry = z.infer<typeof SteeringEntry>;

/** `GET /threads/:id/steering`: oldest first. */
export const SteeringList = z.object({ steering: z.array(SteeringEntry) });
