/**
 * What the runtime's answers look like on the wire, for the clients that read them: the
 * client library checks an answer against these before handing it on, so an answer of
 * the wrong shape is a `decode` failure (SPEC "Errors") rather than a wrong value later.
 * They pin the fields a caller branches on and let the rest pass; the TypeScript types
 * beside each route say the whole shape.
 */
import { z } from "zod";
import { EVENT_KINDS } from "./events.js";
import { FAILURE_CLASSES } from "./engine.js";
import { THREAD_STAGES } from "./threads.js";

const seq = z.number().int().positive();
const ts = z.string().min(1);

export const SpawnResultAnswer = z.object({ threadId: z.string().min(1) }).passthrough();

export const MessageAcceptedAnswer = z.object({ seq, ts }).passthrough();

export const ThreadSummaryAnswer = z.object({ id: z.string().min(1), model: z.string(), stage: z.enum(THREAD_STAGES), archived: z.boolean() }).passthrough();

export const ThreadRowAnswer = ThreadSummaryAnswer.extend({ turns: z.number().int().nonnegative(), spec: z.object({}).passthrough() });

export const ThreadListPageAnswer = z.object({ threads: z.array(ThreadSummaryAnswer), nextAfter: z.string().nullable(), hasMore: z.boolean() }).passthrough();

export const ThreadEventAnswer = z.object({ seq, ts, kind: z.enum(EVENT_KINDS), body: z.unknown() }).passthrough();

export const ForwardPageAnswer = z.object({ events: z.array(ThreadEventAnswer), nextAfter: z.string(), hasMore: z.boolean() }).passthrough();

export const ReversePageAnswer = z.object({ events: z.array(ThreadEventAnswer), prevBefore: z.string().nullable(), hasMore: z.boolean() }).passthrough();

export const SendResultAnswer = z
  .object({
    seq,
    ts,
    turnId: z.string().nullable(),
    outcome: z.enum(["completed", "failed", "queued"]),
    failure: z.object({ class: z.enum(FAILURE_CLASSES), error: z.string() }).nullable(),
    reply: z.object({ seq, text: z.string() }).nullable(),
  })
  .passthrough();

export const TurnStatusAnswer = z
  .object({ running: z.boolean(), waitingOn: z.object({ approvals: z.array(z.string()), questions: z.array(z.string()) }), queued: z.number().int().nonnegative() })
  .passthrough();

/** `GET /health`, declared exactly beside the other operator answers; the client checks it under this name. */
export { Health as HealthAnswer } from "./operator.js";

/** The room routes' exact answers (src/api/rooms.ts), under the names the client library checks them by. */
export {
  BuildThread as BuildThreadAnswer,
  Capabilities as CapabilitiesAnswer,
  CostPerMergedPr as CostPerMergedPrAnswer,
  Receipt as ReceiptAnswer,
  ReviewPosted as ReviewPostedAnswer,
  RoomFound as RoomFoundAnswer,
  RoomOnly as RoomOnlyAnswer,
  RoundOnly as RoundOnlyAnswer,
} from "./rooms.js";
