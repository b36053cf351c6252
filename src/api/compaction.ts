/** Shapes of context compaction (SPEC "States and transitions", context window; docs/compaction.md). */
import * as z from "zod";

export const COMPACTION_MODES = ["microcompact", "collapse", "summary"] as const;
export type CompactionMode = (typeof COMPACTION_MODES)[number];

/**
 * What a `window` event did: a mode a caller may ask for, or `drop`, the runtime's last
 * resort when no summary could be written: the oldest turns leave the context whole.
 */
const WindowKind = z.enum([...COMPACTION_MODES, "drop"]);
export type WindowKind = z.infer<typeof WindowKind>;

/** Event seqs, first and last included. */
const SeqRange = z.tuple([z.number().int(), z.number().int()]);
export type SeqRange = z.infer<typeof SeqRange>;

/** Why a reduction ran. */
const WindowTrigger = z.enum(["line", "request", "deadline", "recovery", "engine"]);
export type WindowTrigger = z.infer<typeof WindowTrigger>;

/** The `window` event: one reduction. */
export const WindowBody = z.object({
  kind: WindowKind,
  /** The seqs the reduction took out of the context (microcompact: whose bodies it replaced by a stub). */
  cut: z.array(SeqRange),
  tokensBefore: z.number(),
  tokensAfter: z.number(),
  trigger: WindowTrigger,
  /** Present only when a model wrote the summary. */
  summaryModel: z.string().optional(),
  /** The summary text, for `summary`. */
  summary: z.string().optional(),
  /** A summary was asked for and no model wrote one: the cheap kinds (and, still forced, a drop) ran instead. */
  summaryFailed: z.string().optional(),
});
export type WindowBody = z.infer<typeof WindowBody>;

/** The `window-pending` event: the context crossed a line. */
export const WindowPendingBody = z.object({
  forced: z.boolean(),
  tokens: z.number(),
  window: z.number(),
  /** For a forced window: how long the runtime waits for `POST /threads/:id/compact` before it chooses (0: it does not wait, fewer than two modes a caller could pick would each fit). */
  deadlineMs: z.number().optional(),
  /** The modes a caller may pick. */
  options: z.array(z.enum(COMPACTION_MODES)),
});
export type WindowPendingBody = z.infer<typeof WindowPendingBody>;

/** The `compaction-disposition` event: how a forced window was settled. */
export interface CompactionDispositionBody {
  /** `at-once`: the runtime reduced without waiting, as fewer than two modes a caller could pick would each have made the context fit: with one, the runtime's choice reaches it; with none, only its last resort can. */
  settledBy: "request" | "deadline" | "at-once" | "refused";
  mode: WindowKind | null;
  /** For `refused`: WindowThrash, WindowNoHeadroom or WindowBlocked. */
  refusal?: WindowRefusal;
}

export const WINDOW_REFUSALS = ["WindowThrash", "WindowNoHeadroom", "WindowBlocked"] as const;
export type WindowRefusal = (typeof WINDOW_REFUSALS)[number];

/** A recorded reduction: its `window` event's body and seq. */
const Reduction = WindowBody.extend({ seq: z.number().int() });

export const CompactRequest = z.object({ mode: z.enum(COMPACTION_MODES).optional() }).strict();
export type CompactRequest = z.infer<typeof CompactRequest>;

/** `GET /threads/:id/compact`. */
export const CompactionStatus = z.object({
  /** Tokens in the context now; null before the first model call told the window. */
  tokens: z.number().nullable(),
  model: z.string(),
  window: z.number().nullable(),
  warnAt: z.number().nullable(),
  forcedAt: z.number().nullable(),
  pending: WindowPendingBody.extend({ seq: z.number().int(), deadlineAt: z.string().nullable() }).nullable(),
  lastReduction: Reduction.nullable(),
  refusals: z.array(z.object({ seq: z.number().int(), ts: z.string(), refusal: z.enum(WINDOW_REFUSALS), text: z.string() })),
});
export type CompactionStatus = z.infer<typeof CompactionStatus>;

/** `POST /threads/:id/compact`: the reductions it ran, oldest first (none: nothing to reduce). */
export const CompactResult = z.object({ reductions: z.array(Reduction), tokens: z.number().nullable() });
export type CompactResult = z.infer<typeof CompactResult>;
