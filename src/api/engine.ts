/**
 * The engines binding: how a Thread object runs a turn on an engine host.
 *
 * The object POSTs a `TurnRequest` to `/turns`; the answer is a stream of
 * `EngineReport`s, one JSON object per line, ending with an `end` report. Decisions,
 * answers and interrupts go back as separate requests naming the turn. The binding is
 * fetch-shaped, so the host can be the local front (Node), a container or a URL.
 */
import * as z from "zod";
import type { EngineAttachment } from "./attachments.js";
import type { Engine } from "./threads.js";
import type { UiState } from "./ui.js";

/** The header the worker sends its per-boot token in; the engine host answers nothing without it. */
export const ENGINES_TOKEN_HEADER = "x-service-engines";

export const FAILURE_CLASSES = [
  "quota",
  "auth",
  "model-not-found",
  "unsupported-model",
  "engine-unavailable",
  "tool",
  "permission",
  "session",
  "closed",
  "interrupted",
  "stalled",
  "unknown",
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** Why a completed turn ended other than by the model finishing its answer. */
export const TURN_STOPS = ["length"] as const;
export type TurnStop = (typeof TURN_STOPS)[number];

/** Any JSON value: tool inputs are whatever the model wrote. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * Any JSON in a request body the router validates: the body was parsed as JSON already,
 * its depth bounded. `json` below, a recursive schema, is too deep for the router's types;
 * the objects take this as `Json`.
 */
export const AnyJson = z.unknown().refine((v) => v !== undefined, "any JSON value");

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
);

/**
 * One entry of the shared transcript, the model's view of the thread so far. `seat` names the seat whose turn wrote an assistant,
 * tool-call or tool-result entry (absent: the first seat, as before seats); `from` the
 * sender of a user message, when it named one. The engines get each seat's view of it
 * (src/rules/seat-view.ts), where these become labels.
 */
export type TranscriptEntry =
  | { role: "user"; text: string; from?: string }
  | { role: "assistant"; text: string; seat?: string }
  | { role: "tool-call"; callId: string; name: string; input: Json; seat?: string }
  | { role: "tool-result"; callId: string; name: string; output: string; isError: boolean; seat?: string };

export interface TurnInput {
  seq: number;
  text: string;
  from?: string;
  /** The message's attachments: the engine host writes each at its `path` in the working directory; images also go to a model that reads them. */
  attachments?: EngineAttachment[];
}

export interface AccountChoice {
  only: string[] | null;
  exclude: string[];
}

export interface TurnRequest {
  turnId: string;
  threadId: string;
  engine: Engine;
  model: string;
  permissions: "ask" | "allow" | "deny";
  cwd: string | null;
  /** The thread's own account; when null the engine host picks one as `accountChoice` allows. */
  account: string | null;
  /** Accounts a thread without its own may run on: `only` these (null: any), never those in `exclude`. */
  accountChoice: AccountChoice;
  /** The spawn's per-session proxy environment, replacing the runtime's proxy settings. */
  proxyEnv: Record<string, string> | null;
  /** A build thread: the engine host refuses a cwd whose real path lies in a registered code root or holds one (docs/code.md, "The fence"). */
  buildFence?: true;
  /**
   * The cwd is a runtime-owned worktree of a pull request (under the data directory, made by
   * the code service's `POST /git/worktrees`): the sandbox binds it read-only for `review`,
   * writable for `build`, with its mirror read-only. Without it such a cwd is refused.
   */
  worktree?: "review" | "build";
  /** Everything before this turn, oldest first, with the runtime's reductions applied. */
  transcript: TranscriptEntry[];
  /**
   * The runtime reduced the context since the engine's session last ran (docs/compaction.md):
   * an engine that keeps a session of its own starts a new one from `transcript` instead of
   * resuming the one that no longer fits.
   */
  freshSession: boolean;
  /**
   * Instead of a turn, the engine compacts its own session (codex's `thread/compact/start`,
   * the agent SDK's `/compact`) and reports `compacted`; `inputs` is empty. An engine
   * without a session of its own, or with none saved yet, fails it (class `session`).
   */
  compact?: true;
  /**
   * The model's window and the runtime's warning line, in tokens, once known: an engine that
   * compacts on its own when told where (codex) does so at that line, so a long turn
   * compacts mid-turn and says so (`compacted`).
   */
  window: { tokens: number; compactAt: number } | null;
  /** The messages this turn answers, in the order they were accepted. */
  inputs: TurnInput[];
  /**
   * The thread's other active seats, when this turn's seat holds the thread: its model is
   * offered the runtime's `offer_handoff` tool to hand the thread to one of them
   * (docs/seats.md). Empty: no such tool.
   */
  handoffTo: { name: string; role: string | null }[];
  /** The thread answers a delegation that has no outcome yet: its model is offered `report_milestone` and `report_outcome` (docs/tools.md). */
  delegated: boolean;
  /** The review room the thread reviews for: its turns are offered `submit_verdict`. */
  room?: string;
}

/**
 * Body of `POST /summaries` on the engines binding: the curator model (then its fallback)
 * writes a summary of `entries` for a `summary` reduction (docs/compaction.md).
 */
export interface SummaryRequest {
  threadId: string;
  /** The curator model, then its fallback; each is asked once, with the pi engine's accounts. */
  models: string[];
  /** The thread's own account, for the models of its provider; the others take one as `accountChoice` allows. */
  account: string | null;
  accountChoice: AccountChoice;
  proxyEnv: Record<string, string> | null;
  /** How long one model may take, in ms. */
  timeoutMs: number;
  entries: TranscriptEntry[];
}

/**
 * Body of `POST /turn-ends`: a turn the runtime failed after the engine's last run of it
 * ended refused as too long (`windowFull`), when no reduction made room. That run was
 * logged as `window-full`, not as the turn's end; this is its end, for the front's log.
 */
export interface TurnEndNote {
  threadId: string;
  turnId: string;
  engine: Engine;
  model: string;
  class: FailureClass;
  startedAt: number;
}

/** Body of `POST /reflections`: the curator reads these memories and draws conclusions that cite them (docs/memory.md). */
export interface ReflectionRequest extends Omit<SummaryRequest, "entries"> {
  memories: { id: string; kind: string; text: string }[];
}

/** The answer: reflections, each with the ids it cites as the model gave them, or why no model wrote any. */
export type ReflectionAnswer = { reflections: { text: string; cites: string[] }[]; model: string } | { error: string };

/** The answer: a summary and the model that wrote it, or why none did (each model's error). */
export type SummaryAnswer = { summary: string; model: string } | { error: string };

/**
 * Body of `POST /interfaces`: the interface model writes a component tree for the thread
 * from its state (docs/ui.md). `retry`: its last answer was refused, and why; it is asked
 * again with both. The worker checks the tree; this call only asks.
 */
export interface InterfaceRequest extends Omit<SummaryRequest, "entries"> {
  state: UiState;
  retry: { answer: string; problem: string } | null;
}

/** The answer: the model's text and the model, or why no model wrote one. */
export type InterfaceAnswer = { text: string; model: string } | { error: string };

/** Why a turn failed: its class and the error's text. */
export const TurnFailure = z.object({
  class: z.enum(FAILURE_CLASSES),
  error: z.string(),
  /** The provider refused the prompt as longer than the model's window: the runtime may reduce the context and go on. */
  windowFull: z.literal(true).optional(),
});
export type TurnFailure = z.infer<typeof TurnFailure>;

/** One line of a turn's report stream. */
export const EngineReport = z.discriminatedUnion("type", [
  /** Live output for `stream` subscribers: never stored. */
  z.object({ type: z.literal("delta"), frame: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal("reply"), text: z.string() }),
  z.object({ type: z.literal("tool-call"), callId: z.string(), name: z.string(), input: json }),
  z.object({ type: z.literal("tool-result"), callId: z.string(), name: z.string(), output: z.string(), isError: z.boolean() }),
  z.object({ type: z.literal("approval"), approvalId: z.string().min(1).max(100), callId: z.string(), name: z.string(), input: json }),
  z.object({ type: z.literal("question"), requestId: z.string().min(1).max(100), question: z.string() }),
  z.object({
    type: z.literal("usage"),
    model: z.string(),
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    /** null when the model has no price in the engine's catalog: unknown, never counted as free. */
    usd: z.number().nonnegative().nullable(),
    /** The model's context window in tokens, when the engine's catalog knows it. */
    contextWindow: z.number().int().positive().optional(),
    /**
     * Tokens the context of the turn's last model call held (its input and output), for an
     * engine whose report sums several calls; absent, the report is one call and its sum is that.
     */
    contextTokens: z.number().int().nonnegative().optional(),
  }),
  /**
   * The turn's last report; `failure` is present exactly when the outcome is `failed`.
   * `stop: "length"` says a completed turn ended because the model's output limit cut its
   * last message (a `length` / `max_tokens` / `max_output_tokens` stop).
   */
  z.object({ type: z.literal("end"), outcome: z.enum(["completed", "failed"]), failure: TurnFailure.optional(), stop: z.enum(TURN_STOPS).optional() }),
  /**
   * A message sent to steer the running turn (`POST /turns/:turnId/steer`) joined the
   * engine's conversation: the model reads it before its next call. A steer the engine
   * queued but never reports this way was not taken (the turn ended first).
   */
  z.object({ type: z.literal("steered"), seq: z.number().int().positive() }),
  /** The engine compacted its own session: asked (`compact`), or on its own during a turn. */
  z.object({ type: z.literal("compacted"), preTokens: z.number().int().nonnegative().optional() }),
  /** Keeps an idle report stream visibly alive. */
  z.object({ type: z.literal("ping") }),
]);
export type EngineReport = z.infer<typeof EngineReport>;

export const APPROVAL_DECISIONS = ["allow", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const QUESTION_ACTIONS = ["answer", "dismiss", "continue"] as const;
export type QuestionAction = (typeof QUESTION_ACTIONS)[number];

/** Body of `POST /turns/:turnId/steer` on the engines binding: a message for the running turn, labelled as the turn's inputs are. */
export interface SteerRequest {
  seq: number;
  text: string;
}

/** Body of `POST /turns/:turnId/questions/:requestId` on the engines binding. */
export interface QuestionReply {
  action: QuestionAction;
  answer?: string;
}
