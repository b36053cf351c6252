/** Request and response shapes of the turn routes (SPEC "Start work", "Control a turn"). */
import { z } from "zod";
import { Attachments } from "./attachments.js";
import { APPROVAL_DECISIONS, FAILURE_CLASSES, type Json, type TurnFailure } from "./engine.js";
import { ON_BUSY, SeatName, SpawnSpec } from "./threads.js";

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
export interface QueuedBecause {
  code: string;
  error: string;
  key?: string;
  index?: number;
  tag?: string;
}

/**
 * `POST /threads/:id/send` once the turn that answered the message ended, or (202,
 * outcome `queued`) once it is clear no turn will take it for now: the thread went
 * degraded or was retired while the message waited. The message stays accepted and
 * queued; it runs after `recover` or `restore`.
 */
export interface SendResult {
  /** The message. */
  seq: number;
  ts: string;
  turnId: string | null;
  outcome: "completed" | "failed" | "queued";
  failure: TurnFailure | null;
  /** The turn's last reply, or null when it wrote none. */
  reply: { seq: number; text: string } | null;
  /** Why a `queued` message waits: the refusal a new message would get now. */
  queuedBecause?: QueuedBecause;
}

export interface TurnStatus {
  running: boolean;
  turn: { turnId: string; index: number; startedAt: string; inputs: number[] } | null;
  /** Open approvals and questions the running turn waits on. */
  waitingOn: { approvals: string[]; questions: string[] };
  /** Messages accepted and waiting for the next turn. */
  queued: number;
}

export const ApprovalDecisionBody = z
  .object({ decision: z.enum(APPROVAL_DECISIONS, { message: "decision must be allow or deny" }) })
  .strict();

export interface ApprovalResolved {
  approvalId: string;
  decision: "allow" | "deny";
  seq: number;
}

export const QuestionAnswerBody = z.object({ answer: z.string().min(1).max(100_000) }).strict();

export interface QuestionStatus {
  requestId: string;
  threadId: string;
  turnId: string;
  question: string;
  status: "open" | "answered" | "dismissed" | "continued" | "cancelled";
  answer: string | null;
  /** The event that asked, and the one that closed it. */
  seq: number;
  resolvedSeq: number | null;
}

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

export interface LoopState {
  status: "running" | "paused" | "stopped" | "finished";
  prompt: string;
  maxTurns: number;
  until: string | null;
  /** Turns the loop has run so far. */
  done: number;
  /** Why it is not running: `stopped`, `until-matched`, `max-turns`, `turn-failed`. */
  reason: string | null;
}

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

/** `GET /threads/:id/steering`: a message sent with `onBusy: "steer"` while a turn ran. */
export interface SteeringEntry {
  /** The message's seq. */
  seq: number;
  /** The turn it was sent to steer. */
  turnId: string;
  /** Whether the engine took it into that turn; null while it has not said. Not taken, the next turn answers it. */
  taken: boolean | null;
  reason: string | null;
  /** The `steered` event that settled it. */
  resolvedSeq: number | null;
}
