import * as z from "zod";
import { AnyJson, type Json } from "./engine.js";
import { SpawnSpec } from "./threads.js";

/** What an operation is (SPEC "Resources"): a delegation to a child thread, a subscription edge, or a long action. */
export const OPERATION_KINDS = ["delegation", "subscription", "action"] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const OPERATION_OUTCOMES = ["completed", "failed", "cancelled"] as const;
export type OperationStatus = (typeof OPERATION_OUTCOMES)[number];

/**
 * `POST /threads/:id/operations`. A delegation needs the `prompt` its child is sent, and
 * may give the child's spawn `spec`; `detail` is the caller's own data, kept with it.
 * (`operationShapeRefusal` checks what belongs to which kind: a refinement here made the
 * router's types too deep.)
 */
export const StartOperation = z
  .object({
    kind: z.enum(OPERATION_KINDS),
    title: z.string().min(1).max(200),
    prompt: z.string().min(1).max(200_000).optional(),
    spec: SpawnSpec.optional(),
    detail: z.record(z.string(), AnyJson).optional(),
  })
  .strict();
export type StartOperation = z.infer<typeof StartOperation>;

export const Milestone = z.object({ text: z.string().min(1).max(4000), data: AnyJson.optional() }).strict();
export const Outcome = z.object({ status: z.enum(OPERATION_OUTCOMES), result: AnyJson.optional(), error: z.string().max(4000).optional() }).strict();

/** `POST /threads/:id/operations/:operation`: a milestone, or the one outcome. */
export const ReportOperation = z.union([z.object({ milestone: Milestone }).strict(), z.object({ outcome: Outcome }).strict()]);
export type ReportOperation = z.infer<typeof ReportOperation>;
export type OperationOutcome = z.infer<typeof Outcome>;

/** Any JSON: the caller's or the child's own data, kept as given. */
const JsonValue = z.custom<Json>();

export const OperationSummary = z.object({
  operation: z.string(),
  kind: z.enum(OPERATION_KINDS),
  title: z.string(),
  /** `open` until its outcome, then the outcome's status. */
  state: z.enum(["open", ...OPERATION_OUTCOMES]),
  /** A delegation's child thread. */
  child: z.string().nullable(),
  detail: z.record(z.string(), JsonValue).nullable(),
  startedSeq: z.number().int(),
  settledSeq: z.number().int().nullable(),
  outcome: z
    .object({ status: z.enum(OPERATION_OUTCOMES), result: JsonValue.optional(), error: z.string().optional(), by: z.enum(["caller", "child"]) })
    .nullable(),
  milestones: z.number().int(),
  startedAt: z.string(),
  settledAt: z.string().nullable(),
});
export type OperationSummary = z.infer<typeof OperationSummary>;

/** `GET /threads/:id/operations`: oldest first. */
export const OperationList = z.object({ operations: z.array(OperationSummary) });
export type OperationList = z.infer<typeof OperationList>;

/** `GET /threads/:id/operations/:operation`: the operation with its milestones, oldest first. */
export const OperationDetail = OperationSummary.extend({
  milestones: z.array(z.object({ seq: z.number().int(), ts: z.string(), text: z.string(), data: JsonValue.optional() })),
});
export type OperationDetail = z.infer<typeof OperationDetail>;

/** The answer to a start or a report: the operation, and the event that recorded it. */
export const OperationAccepted = z.object({
  operation: z.string(),
  seq: z.number().int(),
  ts: z.string(),
  state: OperationSummary.shape.state,
  child: z.string().optional(),
  /** An Idempotency-Key's replay: the first answer's, nothing written again. */
  replayed: z.literal(true).optional(),
});
export type OperationAccepted = z.infer<typeof OperationAccepted>;

/** Why a start's fields do not fit its kind, or null. */
export function operationShapeRefusal(b: StartOperation): string | null {
  if (b.kind === "delegation" && b.prompt === undefined) return "prompt: a delegation needs the prompt its child is sent";
  if (b.kind !== "delegation" && (b.prompt !== undefined || b.spec !== undefined)) return "prompt and spec are for a delegation only";
  return null;
}
