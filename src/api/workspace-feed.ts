/** What a workspace's feed holds (`GET /workspaces/:name/events`, `/changes`, `/tail`). */
import * as z from "zod";
import { APPROVAL_DECISIONS, QUESTION_ACTIONS, type Json } from "./engine.js";
import { ENGINES, ROLES, type ThreadSummary } from "./threads.js";
import { Policy } from "./workspaces.js";

/** Any JSON: a tool call's input, as the engine gave it. */
const JsonValue = z.custom<Json>();

/** An approval open in one of the workspace's threads (`GET /workspaces/:name/approvals`); `seq` is the thread's event that asked. */
export const OpenApproval = z.object({
  approvalId: z.string(),
  threadId: z.string(),
  turnId: z.string(),
  seq: z.number().int(),
  name: z.string(),
  input: JsonValue,
  openedAt: z.string(),
});

/** A question open in one of the workspace's threads (`GET /workspaces/:name/questions`); `seq` is the thread's event that asked. */
export const OpenQuestion = z.object({ requestId: z.string(), threadId: z.string(), turnId: z.string(), seq: z.number().int(), question: z.string(), openedAt: z.string() });

/** `GET /workspaces/:name/approvals`: oldest first. */
export const WorkspaceApprovals = z.object({ workspace: z.string(), approvals: z.array(OpenApproval) });

/** `GET /workspaces/:name/questions`: oldest first. */
export const WorkspaceQuestions = z.object({ workspace: z.string(), questions: z.array(OpenQuestion) });

/** An opened wait as the feed records it: `threadSeq` is the thread's event that asked (its `seq` there; `seq` is the feed's). */
const ThreadSeq = { threadSeq: z.number().int() };

/** The body of each kind; the entry's `threadId` sits beside it, not in it. */
const FEED_BODIES = {
  "thread-spawned": z.object({ role: z.enum(ROLES), title: z.string().nullable(), engine: z.enum(ENGINES), model: z.string(), parent: z.string().nullable() }),
  "thread-archived": z.object({ reason: z.string().nullable() }),
  "thread-restored": z.object({}),
  /** The summary the catalog got (as `GET /threads` lists it), recorded only when it differs from the last one recorded. */
  "thread-changed": z.object({ summary: z.custom<ThreadSummary>() }),
  /** `threadId` is the thread that took or gave up the slot. */
  "head-changed": z.object({ head: z.string().nullable() }),
  "policy-changed": z.object({ policy: Policy }),
  "approval-opened": OpenApproval.omit({ threadId: true, seq: true }).extend(ThreadSeq),
  "approval-resolved": z.object({ approvalId: z.string(), decision: z.enum([...APPROVAL_DECISIONS, "cancelled"]) }),
  "question-opened": OpenQuestion.omit({ threadId: true, seq: true }).extend(ThreadSeq),
  "question-resolved": z.object({ requestId: z.string(), action: z.enum([...QUESTION_ACTIONS, "cancelled"]) }),
};

export type FeedKind = keyof typeof FEED_BODIES;
export type FeedBodies = { [K in FeedKind]: z.infer<(typeof FEED_BODIES)[K]> };

/** One kind's entry: the body's fields beside the envelope. */
const entry = <K extends FeedKind, B extends z.ZodRawShape>(kind: K, body: z.ZodObject<B>) =>
  z.object({ seq: z.number().int(), ts: z.string(), kind: z.literal(kind), threadId: z.string().nullable() }).extend(body.shape);

/**
 * One entry as readers get it: the body's fields beside the envelope. `seq` ascends by
 * exactly 1 per workspace and is the SSE id and the tail cursor.
 */
export const FeedEntry = z.discriminatedUnion("kind", [
  entry("thread-spawned", FEED_BODIES["thread-spawned"]),
  entry("thread-archived", FEED_BODIES["thread-archived"]),
  entry("thread-restored", FEED_BODIES["thread-restored"]),
  entry("thread-changed", FEED_BODIES["thread-changed"]),
  entry("head-changed", FEED_BODIES["head-changed"]),
  entry("policy-changed", FEED_BODIES["policy-changed"]),
  entry("approval-opened", FEED_BODIES["approval-opened"]),
  entry("approval-resolved", FEED_BODIES["approval-resolved"]),
  entry("question-opened", FEED_BODIES["question-opened"]),
  entry("question-resolved", FEED_BODIES["question-resolved"]),
]);
export type FeedEntry = z.infer<typeof FeedEntry>;

/** The kinds `/changes` carries: changes to threads. */
export const CHANGE_KINDS: readonly FeedKind[] = ["thread-spawned", "thread-changed", "thread-archived", "thread-restored"];

/** How many threads one `/changes?threads=` may name. */
export const MAX_WATCHED_THREADS = 100;

/** `GET /workspaces/:name/tail?after=`: oldest first; `nextAfter` is the cursor for the next page. */
export const FeedForwardPage = z.object({ events: z.array(FeedEntry), nextAfter: z.string(), hasMore: z.boolean() });
export type FeedForwardPage = z.infer<typeof FeedForwardPage>;

/** `GET /workspaces/:name/tail` (with `before` or neither): newest first; `prevBefore` is null when the page is empty. */
export const FeedReversePage = z.object({ events: z.array(FeedEntry), prevBefore: z.string().nullable(), hasMore: z.boolean() });
export type FeedReversePage = z.infer<typeof FeedReversePage>;
