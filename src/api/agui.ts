/**
 * AG-UI 1.0 (`@ag-ui/core`) as the runtime speaks it: the events it sends and the run
 * input it takes (docs/agui.md). Written here rather than imported so the worker carries
 * no second zod and the contract imports nothing; `test/unit/agui-projection.test.ts`
 * holds what the runtime sends to the official schemas.
 */
import * as z from "zod";

/** The sender a message posted through `POST /threads/:id/agui` is recorded with. */
export const AGUI_SENDER = "ag-ui";

/** An AG-UI id is a string; the runtime caps it, as it does every name a caller gives. */
const Id = z.string().min(1).max(200);

export const TokenUsage = z.object({
  model: z.string().optional(),
  inputTokens: z.number().int().min(0).optional(),
  outputTokens: z.number().int().min(0).optional(),
  totalTokens: z.number().int().min(0).optional(),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

/** Something a run needs from a person before it continues: an approval or a question. */
export const Interrupt = z.object({
  id: z.string(),
  reason: z.enum(["tool-approval", "question"]),
  message: z.string().optional(),
  toolCallId: z.string().optional(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
});
export type Interrupt = z.infer<typeof Interrupt>;

const Base = { timestamp: z.number().int().optional() };
const RunIds = { threadId: z.string(), runId: z.string() };

/** The events the runtime sends (a subset of the protocol's), each with the fields it fills. */
export const AguiEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("RUN_STARTED"), ...Base, ...RunIds }),
  z.object({
    type: z.literal("RUN_FINISHED"),
    ...Base,
    ...RunIds,
    outcome: z.discriminatedUnion("type", [
      z.object({ type: z.literal("success") }),
      z.object({ type: z.literal("interrupt"), interrupts: z.array(Interrupt).min(1) }),
      z.object({ type: z.literal("cancelled") }),
    ]),
    usage: z.array(TokenUsage).optional(),
  }),
  z.object({ type: z.literal("RUN_ERROR"), ...Base, message: z.string(), code: z.string().optional(), usage: z.array(TokenUsage).optional() }),
  z.object({ type: z.literal("TEXT_MESSAGE_START"), ...Base, messageId: z.string(), role: z.enum(["assistant", "user", "system"]) }),
  z.object({ type: z.literal("TEXT_MESSAGE_CONTENT"), ...Base, messageId: z.string(), delta: z.string().min(1) }),
  z.object({ type: z.literal("TEXT_MESSAGE_END"), ...Base, messageId: z.string() }),
  z.object({ type: z.literal("TOOL_CALL_START"), ...Base, toolCallId: z.string(), toolCallName: z.string(), parentMessageId: z.string().optional() }),
  z.object({ type: z.literal("TOOL_CALL_ARGS"), ...Base, toolCallId: z.string(), delta: z.string() }),
  z.object({ type: z.literal("TOOL_CALL_END"), ...Base, toolCallId: z.string() }),
  z.object({ type: z.literal("TOOL_CALL_RESULT"), ...Base, messageId: z.string(), toolCallId: z.string(), content: z.string(), role: z.literal("tool") }),
  z.object({
    type: z.literal("ACTIVITY_SNAPSHOT"),
    ...Base,
    messageId: z.string(),
    activityType: z.string(),
    content: z.record(z.string(), z.unknown()),
  }),
  z.object({ type: z.literal("CUSTOM"), ...Base, name: z.string(), value: z.unknown() }),
]);
export type AguiEvent = z.infer<typeof AguiEvent>;

/** `GET /threads/:id/agui-page`: the query. */
export const AguiPageQuery = z.object({
  before: z.string().regex(/^\d+$/).optional(),
  limit: z.string().regex(/^\d+$/).optional(),
});

/** One log event's AG-UI events: the frames a stream sends for it, the last with `id: seq`. */
export const AguiFrameGroup = z.object({ seq: z.number().int().positive(), events: z.array(AguiEvent) });

/**
 * `GET /threads/:id/agui-page`: older events first as the log has them, newest page
 * first as `tail?before=` pages; each group projected as a reader joining at the page's
 * first seq would see it (a run a page opens in the middle of is reopened first, in
 * `opening`). `nextBefore` pages further back, absent at the log's start.
 */
export const AguiPage = z.object({
  opening: z.array(AguiEvent),
  groups: z.array(AguiFrameGroup),
  nextBefore: z.number().int().positive().optional(),
});
export type AguiPage = z.infer<typeof AguiPage>;

const Message = z.looseObject({ id: Id, role: z.string(), content: z.unknown().optional() });

/** An answer to one interrupt, by its id: an approval's decision, a question's answer. */
export const ResumeEntry = z.looseObject({
  interruptId: Id,
  status: z.enum(["resolved", "cancelled"]),
  payload: z.unknown().optional(),
});
export type ResumeEntry = z.infer<typeof ResumeEntry>;

/**
 * `POST /threads/:id/agui`: the protocol's `RunAgentInput` as `HttpAgent` sends it. Loose,
 * as the protocol's own schema is: tools, context, state and forwarded props a client
 * sends are accepted and not used (the thread's engine has its own tools).
 */
export const RunAgentInput = z.looseObject({
  threadId: z.string(),
  runId: Id,
  messages: z.array(Message).max(10_000),
  resume: z.array(ResumeEntry).max(100).optional(),
});
export type RunAgentInput = z.infer<typeof RunAgentInput>;

/** An approval's payload in a resume entry. */
export const ApprovalPayload = z.object({ decision: z.enum(["allow", "deny"]) });
/** A question's payload in a resume entry: an answer, or what to do without one. */
export const QuestionPayload = z.union([z.object({ answer: z.string().min(1) }), z.object({ action: z.enum(["dismiss", "continue"]) })]);

/** The response schemas interrupts carry, so a frontend can build the form. */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: "object",
  properties: { decision: { type: "string", enum: ["allow", "deny"] } },
  required: ["decision"],
} as const;
export const QUESTION_RESPONSE_SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" }, action: { type: "string", enum: ["dismiss", "continue"] } },
} as const;
