import * as z from "zod";
import { ENGINES, type PERMISSIONS } from "./threads.js";
import { Subscribe } from "./subscriptions.js";
import { OfferHandoff } from "./seats.js";
import { Recall, Retain } from "./memory.js";
import { FilesQuery, OutlineQuery, ReadQuery, SearchBody } from "./code.js";
import { SubmitVerdictInput } from "./rooms.js";

/**
 * The runtime's own tools, offered to every engine's model the same way (docs/tools.md):
 * engine_a and engine_b reach them as the MCP server `runtime`, pi calls them in process.
 * Each input schema is declared once here, for the MCP server's tool list, pi's tools and
 * the worker's route that runs them.
 */
export const RUNTIME_TOOLS_SERVER = "runtime";

export const DelegateInput = z
  .object({
    title: z.string().min(1).max(200).describe("What the child thread is for, in a few words"),
    prompt: z.string().min(1).max(200_000).describe("The child's task: everything it needs to know, as its first message"),
    engine: z.enum(ENGINES).optional().describe("The child's engine; with neither engine nor model, the child runs on this thread's engine and model"),
    model: z.string().min(1).max(200).optional().describe("The child's model; with neither engine nor model, this thread's"),
  })
  .strict();

export const SubscribeInput = Subscribe.omit({ deliver: true });

export const MilestoneInput = z.object({ text: z.string().min(1).max(4000).describe("What was reached") }).strict();

export const OutcomeInput = z
  .object({
    status: z.enum(["completed", "failed"]),
    result: z.string().max(200_000).optional().describe("The answer the delegating thread receives"),
    error: z.string().max(4000).optional().describe("Why it failed"),
  })
  .strict();

export const OfferHandoffInput = OfferHandoff;

export const RecallInput = Recall;
export const RetainInput = Retain.omit({ thread: true, seq: true });

export const RUNTIME_TOOLS = {
  delegate: {
    input: DelegateInput,
    description:
      "Hand a task to a new child thread, which works on it on its own. Its result comes back to this thread as a message when it finishes; you need not wait for it.",
  },
  subscribe: {
    input: SubscribeInput,
    description:
      "Watch a thread this one delegated to or forked ({thread: id}), or the thread that delegated to this one, for events (filter kinds and text): each match wakes this thread with a message.",
  },
  report_milestone: {
    input: MilestoneInput,
    description: "Tell the thread that delegated this task what you have reached so far.",
  },
  report_outcome: {
    input: OutcomeInput,
    description: "Report this delegated task's outcome to the thread that delegated it: completed with its result, or failed with why. Once only.",
  },
  offer_handoff: {
    input: OfferHandoffInput,
    description: "Offer this conversation to another seat, which answers the next messages once the offer is accepted.",
  },
  recall: {
    input: RecallInput,
    description:
      "Recall what this workspace's agents learned before: the memories that best answer a query, as many as fit a token budget (1000 by default). Retired (corrected) memories only when asked.",
  },
  code_search: {
    input: SearchBody,
    description: "Search the registered repositories (one root, or all): a literal string, or a regular expression with regex true; glob narrows the files. Answers path:line:column and the line.",
  },
  code_read: {
    input: ReadQuery,
    description: "Read lines start to end of a file of a registered repository (root and path as code_search and code_files name them).",
  },
  code_outline: {
    input: OutlineQuery,
    description: "The symbols of a file (functions, classes, methods, types...) with their line ranges and first lines.",
  },
  code_files: {
    input: FilesQuery,
    description: "The tracked files under a path of a registered repository, with an optional glob; page with cursor.",
  },
  submit_verdict: {
    input: SubmitVerdictInput,
    description:
      "Return this review round's verdict on the pull request: the decision (approve, request_changes or comment), a summary, and findings on lines of the diff (path, line of the head's file, side RIGHT, or LEFT for a removed line; severity critical, major, minor or nit; body). The only way a verdict counts: call it once, when the review is done.",
  },
  retain: {
    input: RetainInput,
    description:
      "Keep something worth knowing next time in the workspace's memory: a fact (true until corrected) or an episode (what happened once, and why). Give a key to a fact that a later one replaces, or name the memory it corrects in supersedes.",
  },
} as const;

export type RuntimeToolName = keyof typeof RUNTIME_TOOLS;
export const RUNTIME_TOOL_NAMES = Object.keys(RUNTIME_TOOLS) as RuntimeToolName[];

/**
 * `POST /internal/tools`: the engine host runs a tool call of a running turn. The worker
 * checks that the turn is the thread's running one and whose seat it is, then calls what
 * the matching route calls.
 */
export const RuntimeToolCall = z
  .object({
    thread: z.string().min(1).max(100),
    turn: z.string().min(1).max(100),
    tool: z.enum(RUNTIME_TOOL_NAMES as [RuntimeToolName, ...RuntimeToolName[]]),
    input: z.record(z.string(), z.unknown()),
  })
  .strict();
export type RuntimeToolCall = z.infer<typeof RuntimeToolCall>;

/** Who makes a runtime tool call: the running turn's seat, and the permissions its thread passes on to a child. */
export interface ToolTurn {
  seat: string;
  /** The message the turn answers last: where a memory the model retains came from. */
  sourceSeq: number | null;
  permissions: (typeof PERMISSIONS)[number];
  /** The seat's engine and model now: a child delegated without either runs on them. */
  engine: (typeof ENGINES)[number];
  model: string;
  /** The review room the thread reviews for, or null. */
  room: string | null;
  /** The messages the turn answers: a room's verdict comes only from the turn that answers its round's message. */
  inputs: number[];
}

/** `POST /internal/tools`, whichever the tool: what the call did, in words for the model. */
export const RuntimeToolResult = z.object({ text: z.string() });
export type RuntimeToolResult = z.infer<typeof RuntimeToolResult>;

/** A model in a thread this many parents deep (delegations and forks) delegates no further: a chain of delegations cannot grow without end. */
export const MAX_TOOL_DELEGATION_DEPTH = 3;

/**
 * Which of the tools a turn is offered: the report tools to a delegation's child, the
 * handoff to the seat that holds the thread while others sit, the verdict to a review
 * room's thread, the code reads when the host registered a repository.
 */
export function offeredTools(turn: { delegated: boolean; handoffTo: unknown[]; room?: string }, codeRoots = true): RuntimeToolName[] {
  // `delegated`: the thread answers a delegation whose outcome it has not given yet.
  return RUNTIME_TOOL_NAMES.filter((name) => {
    if (name.startsWith("code_")) return codeRoots;
    if (name === "report_milestone" || name === "report_outcome") return turn.delegated;
    if (name === "offer_handoff") return turn.handoffTo.length > 0;
    if (name === "submit_verdict") return turn.room !== undefined;
    return true;
  });
}
