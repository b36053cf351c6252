/**
 * What the runtime's answers look like on the wire, for the clients that read them: the
 * client library checks an answer against these before handing it on, so an answer of
 * the wrong shape is a `decode` failure (SPEC "Errors") rather than a wrong value later.
 * They pin the fields a caller branches on and let the rest pass; the TypeScript types
 * beside each route say the whole shape.
 */
import { z } from "zod";
import { MessageAccepted, SpawnResult, ThreadListPage, ThreadRow } from "./threads.js";
import { ForwardEventPage, ReverseEventPage } from "./tail.js";
import { SendResult, TurnStatus } from "./turns.js";
import { DECISIONS, ROUND_STATES, SEVERITIES, SIDES } from "./rooms.js";

// The thread and turn routes' answers are declared exactly beside their routes; the client
// reads them loose, so a field a newer host adds passes.
export const SpawnResultAnswer = SpawnResult.loose();
export const MessageAcceptedAnswer = MessageAccepted.loose();
export const ThreadRowAnswer = ThreadRow.loose();
export const ThreadListPageAnswer = ThreadListPage.loose();
export const ForwardPageAnswer = ForwardEventPage.loose();
export const ReversePageAnswer = ReverseEventPage.loose();
export const SendResultAnswer = SendResult.loose();
export const TurnStatusAnswer = TurnStatus.loose();

/** `GET /health`, declared exactly beside the other operator answers; the client checks it under this name. */
export { Health as HealthAnswer } from "./operator.js";

const sha = z.string().regex(/^[0-9a-f]{40,64}$/);

/** A review room (src/api/rooms.ts `Room`). */
export const RoomAnswer = z
  .object({
    id: z.string().min(1),
    key: z.string().min(1),
    workspace: z.string(),
    repo: z.string(),
    pr: z.number().int().positive(),
    state: z.enum(["arming", "armed"]),
    threadId: z.string().nullable(),
    reviewerSeat: z.string(),
    seats: z.array(z.object({ name: z.string(), engine: z.string(), model: z.string() }).passthrough()),
    rounds: z.array(z.object({ n: z.number().int().positive(), state: z.enum(ROUND_STATES), head: z.string() }).passthrough()),
  })
  .passthrough();

const FindingAnswer = z.object({ path: z.string(), line: z.number().int().positive(), side: z.enum(SIDES), severity: z.enum(SEVERITIES), body: z.string(), fingerprint: z.string().min(8) }).passthrough();

/** A review round (src/api/rooms.ts `Round`). */
export const RoundAnswer = z
  .object({
    n: z.number().int().positive(),
    state: z.enum(ROUND_STATES),
    seat: z.string(),
    head: sha,
    base: sha,
    threadId: z.string(),
    verdict: z.object({ decision: z.enum(DECISIONS), summary: z.string(), findings: z.array(FindingAnswer) }).passthrough().nullable(),
    failure: z.string().nullable(),
  })
  .passthrough();

export const RoomOnlyAnswer = z.object({ room: RoomAnswer }).passthrough();
export const RoomFoundAnswer = z.object({ room: RoomAnswer, round: RoundAnswer.nullable() }).passthrough();
export const RoundOnlyAnswer = z.object({ round: RoundAnswer }).passthrough();

export const ReviewPostedAnswer = z
  .object({ review: z.object({ id: z.number().int(), posted: z.number().int().nonnegative(), inBody: z.number().int().nonnegative(), skipped: z.number().int().nonnegative(), commitId: sha }).passthrough() })
  .passthrough();

export const CapabilitiesAnswer = z.object({ verdictPoster: z.object({ available: z.boolean(), reason: z.string().optional() }) }).passthrough();

export const BuildThreadAnswer = z.object({ threadId: z.string().min(1), worktree: z.string().min(1) }).passthrough();

export const ReceiptAnswer = z
  .object({
    repo: z.string(),
    pr: z.number().int().positive(),
    head: z.object({ ref: z.string(), sha }).passthrough(),
    checks: z.array(z.object({ name: z.string(), required: z.boolean() }).passthrough()),
    plan: z.array(z.object({ step: z.string(), method: z.string(), expects: z.string() })),
    blocked: z.array(z.object({ code: z.string(), reason: z.string() })),
    ready: z.boolean(),
  })
  .passthrough();

export const CostPerMergedPrAnswer = z
  .object({
    prs: z.array(z.object({ repo: z.string(), pr: z.number().int().positive(), merged: z.boolean(), threads: z.number().int().nonnegative(), usd: z.number() }).passthrough()),
    merged: z.object({ count: z.number().int().nonnegative(), usd: z.number(), perPr: z.number().nullable() }),
    all: z.object({ count: z.number().int().nonnegative(), usd: z.number() }),
    unknown: z.number().int().nonnegative(),
  })
  .passthrough();
