/** Shapes of context compaction (SPEC "States and transitions", context window; docs/compaction.md). */
import { z } from "zod";

export const COMPACTION_MODES = ["microcompact", "collapse", "summary"] as const;
export type CompactionMode = (typeof COMPACTION_MODES)[number];

/**
 * What a `window` event did: a mode a caller may ask for, or `drop`, the runtime's last
 * resort when no summary could be written: the oldest turns leave the context whole.
 */
export type WindowKind = CompactionMode | "drop";

/** Event seqs, first and last included. */
export type SeqRange = [number, number];

/** Why a reduction ran. */
export type WindowTrigger = "line" | "request" | "deadline" | "recovery" | "engine";

/** The `window` event: one reduction. */
export interface WindowBody {
  kind: WindowKind;
  /** The seqs the reduction took out of the context (microcompact: whose bodies it replaced by a stub). */
  cut: SeqRange[];
  tokensBefore: number;
  tokensAfter: number;
  trigger: WindowTrigger;
  /** Present only when a model wrote the summary. */
  summaryModel?: string;
  /** The summary text, for `summary`. */
  summary?: string;
  /** A summary was asked for and no model wrote one: the cheap kinds (and, still forced, a drop) ran instead. */
  summaryFailed?: string;
}

/** The `window-pending` event: the context crossed a line. */
export interface WindowPendingBody {
  forced: boolean;
  tokens: number;
  window: number;
  /** For a forced window: how long the runtime waits for `POST /threads/:id/compact` before it chooses (0: it does not wait, fewer than two modes a caller could pick would each fit). */
  deadlineMs?: number;
  /** The modes a caller may pick. */
  options: CompactionMode[];
}

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

export const CompactRequest = z.object({ mode: z.enum(COMPACTION_MODES).optional() }).strict();
export type CompactRequest = z.infer<typeof CompactRequest>;

/** `GET /threads/:id/compact`. */
export interface CompactionStatus {
  /** Tokens in the context now; null before the first model call told the window. */
  tokens: number | null;
  model: string;
  window: number | null;
  warnAt: number | null;
  forcedAt: number | null;
  pending: (WindowPendingBody & { seq: number; deadlineAt: string | null }) | null;
  lastReduction: (WindowBody & { seq: number }) | null;
  refusals: { seq: number; ts: string; refusal: WindowRefusal; text: string }[];
}

/** `POST /threads/:id/compact`. */
export interface CompactResult {
  reductions: (WindowBody & { seq: number })[];
  tokens: number | null;
}
