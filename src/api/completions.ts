/**
 * SPEC "Completions": `POST /v1/chat/completions` and `GET /v1/models`, and the protocol
 * between the worker and the account pool, which makes the model call (through the
 * credential proxy, failing over across the workspace's accounts).
 */
import * as z from "zod";

export const WORKSPACE_HEADER = "x-service-workspace";
export const SESSION_HEADER = "x-service-session";
export const TRAFFIC_HEADER = "x-service-traffic";
export const SESSION_LABEL_MAX = 128;
export const TRAFFIC_KINDS = ["work", "smoke"] as const;
export type TrafficKind = (typeof TRAFFIC_KINDS)[number];

const TextPart = z.object({ type: z.literal("text"), text: z.string() }).passthrough();
/** Any other part (image_url, input_audio, file): named so the refusal can say what it was. */
const OtherPart = z.object({ type: z.string() }).passthrough();

export const ChatMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant"]),
    content: z.union([z.string(), z.array(z.union([TextPart, OtherPart])), z.null()]),
    name: z.string().optional(),
  })
  .passthrough();
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * The chat-completions request as OpenAI defines it; fields the endpoint does not look at
 * (temperature, max_tokens, ...) pass through to the provider as they are.
 */
export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(ChatMessage).min(1),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullable().optional(),
  })
  .passthrough();
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** The completions error shape (OpenAI's), not the runtime's `{error, code}`. */
export interface CompletionsError {
  error: { message: string; type: string; code: string; param?: string | null };
}

export const COMPLETIONS_CODES = {
  unknownWorkspace: "unknown_workspace",
  modelNotFound: "model_not_found",
  noEligibleAccount: "no_eligible_account",
  noSpendableAccount: "no_spendable_account",
  accountsExhausted: "accounts_exhausted",
  rateLimited: "rate_limited",
  invalidRequest: "invalid_request",
  imageNotSupported: "image_not_supported",
  toolsNotSupported: "tools_not_supported",
  sessionLabelTooLong: "session_label_too_long",
  badTrafficKind: "invalid_traffic_kind",
  upstreamError: "upstream_error",
  /** The account pool is not there: plain `wrangler dev`, or a front that stopped serving it. */
  accountPoolUnavailable: "account_pool_unavailable",
} as const;

/** One account the call tried, in order, and how the provider answered. */
export interface CompletionAttempt {
  account: string;
  status: number;
  /** `ok`, or why the call moved on: `auth`, `quota`, `rate-limit`, `proxy-unreachable`. */
  outcome: string;
}

export interface CompletionUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** What the worker asks the account pool (`POST /completions` on the ACCOUNTS binding). */
export interface CompletionCall {
  /** Accounts to try, in order; the pool keeps those of the model's provider. */
  accounts: string[];
  /** Identifies the caller in the proxy's records (the completions thread). */
  threadId: string;
  request: ChatCompletionRequest;
}

/**
 * The pool's answer: one JSON report per line. Before `start` only an `error` may come
 * (nothing was sent to the client yet); after it, `chunk`s (streamed) or one `result`,
 * then `end`, or an `error` when the provider's stream broke.
 */
export type CompletionReport =
  | { type: "start"; account: string }
  | { type: "chunk"; data: Record<string, unknown> }
  | { type: "result"; completion: Record<string, unknown> }
  | { type: "error"; status: number; code: string; message: string; retryAfterS?: number; attempts: CompletionAttempt[] }
  | { type: "end"; usage: CompletionUsage | null; attempts: CompletionAttempt[] };

/** The `completion` event written to the workspace's completions thread for every call. */
export interface CompletionEventBody {
  model: string;
  account: string | null;
  outcome: "completed" | "failed";
  /** The refusal code when it failed. */
  code: string | null;
  usage: CompletionUsage | null;
  latencyMs: number;
  traffic: TrafficKind;
  session: string | null;
  stream: boolean;
  attempts: CompletionAttempt[];
}

/** `GET /v1/models/:id`, and `GET /v1/models` entries: OpenAI's model object. */
export const ModelEntry = z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() });
export type ModelEntry = z.infer<typeof ModelEntry>;

/** `GET /v1/models`: OpenAI's list shape. */
export const ModelList = z.object({ object: z.literal("list"), data: z.array(ModelEntry) });

/**
 * `POST /v1/chat/completions` without `stream`: OpenAI's `chat.completion` object, as the
 * provider (or the simulator) answered it; the runtime passes it on as it is, so a provider's
 * own additions (`system_fingerprint`, `service_tier`, `reasoning_content`, ...) pass too.
 */
export const ChatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({
        role: z.literal("assistant"),
        content: z.string().nullable(),
        refusal: z.string().nullable().optional(),
        tool_calls: z.array(z.looseObject({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
      }),
      logprobs: z.unknown().optional(),
      finish_reason: z.enum(["stop", "length", "tool_calls", "content_filter", "function_call"]).nullable(),
    }),
  ),
  usage: z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).optional(),
});

/** One frame of a streamed `POST /v1/chat/completions`: OpenAI's `chat.completion.chunk`, passed on as the provider sent it. */
export const ChatCompletionChunk = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.looseObject({ index: z.number().int(), delta: z.looseObject({}), finish_reason: z.string().nullable().optional() })),
  usage: z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).nullable().optional(),
});

/** A streamed call's failure, as its last frame: OpenAI's error object (the status was sent already). */
export const ChatCompletionStreamError = z.object({ error: z.object({ message: z.string(), type: z.string(), code: z.string(), param: z.null() }) });
