import * as z from "zod";
import { MemoryTag } from "./memory.js";
import { Attachments } from "./attachments.js";

export const ENGINES = ["engine_a", "engine_b", "pi"] as const;
export type Engine = (typeof ENGINES)[number];

export const PERMISSIONS = ["ask", "allow", "deny"] as const;
export const ROLES = ["head", "chat", "worker", "reviewer", "fixer"] as const;
export const THREAD_TYPES = ["chat", "build", "review", "completions", "external"] as const;

/** The variables by which a `proxyEnv` names its proxy. */
export const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] as const;

/** A workspace's name: letters, digits, ".", "_" or "-", at most 64. */
export const Name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "letters, digits, '.', '_' or '-', at most 64");

/** A seat's name: letters, digits, "_" or "-", at most 40; it is how messages and handoffs address it (src/api/seats.ts). */
export const SeatName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, "letters, digits, '_' or '-', at most 40");

/**
 * What a message does when it arrives while a turn runs: wait for the next turn (`queue`),
 * steer the running one (`steer`: the running turn takes it in), stop it and be answered next
 * (`interrupt`), or be refused (`reject`, 409 `thread-busy`).
 */
export const ON_BUSY = ["queue", "steer", "interrupt", "reject"] as const;
export type OnBusy = (typeof ON_BUSY)[number];

/** How long an approval or a question may wait for a person: a second to a week, in ms. */
export const WAIT_TIMEOUT = z.number().int().min(1000).max(604_800_000);

/** A spawn's `recall`: the budget and tags of the first turn's recall (docs/memory.md). */
export const RecallOnStart = z
  .object({ budgetTokens: z.number().int().min(1).max(32_000).optional(), tags: z.array(MemoryTag).max(16).optional() })
  .strict();
export type RecallOnStart = z.infer<typeof RecallOnStart>;

/** The spawn spec as a caller sends it; omitted fields get defaults (later: workspace policy). */
export const SpawnSpec = z
  .object({
    workspace: Name.optional(),
    title: z.string().max(200).optional(),
    role: z.enum(ROLES).optional(),
    type: z.enum(THREAD_TYPES).optional(),
    engine: z.enum(ENGINES, { message: `engine must be one of ${ENGINES.join(", ")}` }).optional(),
    model: z.string().min(1).max(200).optional(),
    permissions: z.enum(PERMISSIONS).optional(),
    cwd: z.string().startsWith("/", "cwd must be an absolute path").max(4096).optional(),
    account: z.string().min(1).max(200).optional(),
    /** One session's proxy environment; it must name the proxy, or the session would go out with a placeholder and nothing to swap it. */
    proxyEnv: z
      .record(z.string(), z.string())
      .refine((env) => PROXY_VARIABLES.some((name) => env[name]), `must name a proxy (${PROXY_VARIABLES.join(", ")})`)
      .optional(),
    /**
     * The failover chain, tried in order when a turn fails for lack of allowance
     * (`quota`: the next entry) or of a login (`auth`: the next entry on another engine).
     * A model id keeps the thread's engine when that engine can serve it.
     */
    fallback: z
      .array(z.union([z.string().min(1).max(200), z.object({ engine: z.enum(ENGINES), model: z.string().min(1).max(200) }).strict()]))
      .max(8)
      .optional(),
    /** An approval nobody answers within this many ms is resolved as expired (a deny), so the turn goes on. */
    approvalTimeoutMs: WAIT_TIMEOUT.optional(),
    /** A question nobody answers within this many ms is dismissed, so the turn goes on. */
    questionTimeoutMs: WAIT_TIMEOUT.optional(),
    /** What the thread's messages do while a turn runs, unless a message says otherwise. */
    onBusy: z.enum(ON_BUSY).optional(),
    /** The first turn starts with what the workspace's memory recalls for the first message (docs/memory.md). */
    recall: RecallOnStart.optional(),
  })
  .strict();
export type SpawnSpec = z.infer<typeof SpawnSpec>;

/** One model of a thread: the primary, or an entry of its failover chain. */
export const EngineModel = z.object({ engine: z.enum(ENGINES), model: z.string() });
export type EngineModel = z.infer<typeof EngineModel>;

/** The pull request a thread works on, and the room it reviews for. */
export const PrLink = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  room: z.string().nullable(),
  /** The worktree the runtime made for it, removed when the thread is retired. */
  worktreeId: z.string(),
});
export type PrLink = z.infer<typeof PrLink>;

/** The spec as stored on the thread: every default resolved. */
export const ThreadSpec = z.object({
  workspace: z.string().nullable(),
  title: z.string().nullable(),
  role: z.enum(ROLES),
  type: z.enum(THREAD_TYPES),
  engine: z.enum(ENGINES),
  model: z.string(),
  permissions: z.enum(PERMISSIONS),
  cwd: z.string().nullable(),
  account: z.string().nullable(),
  proxyEnv: z.record(z.string(), z.string()).nullable(),
  fallback: z.array(EngineModel).nullable(),
  /** Null: an approval waits until it is answered or its turn ends. */
  approvalTimeoutMs: z.number().int().nullable(),
  questionTimeoutMs: z.number().int().nullable(),
  /** The thread's default; the workspace policy's, then the host's (`SERVICE_ON_BUSY`), when the spawn named none. */
  onBusy: z.enum(ON_BUSY),
  /** Absent in a thread spawned before memory existed: no recall. */
  recall: RecallOnStart.nullable().optional(),
  /**
   * A thread that works on a pull request (docs/rooms.md): its room's reviewer thread
   * (`room` set) or a build thread. Absent in threads spawned otherwise.
   */
  pr: PrLink.nullable().optional(),
  /** The cwd is a worktree the runtime made for `pr`: read-only to a reviewer (`review`), writable to a builder (`build`). */
  worktree: z.enum(["review", "build"]).nullable().optional(),
});
export type ThreadSpec = z.infer<typeof ThreadSpec>;

/** The fields `/spawn` accepts, as `GET /health` reports them. */
export const SPAWN_FIELDS = Object.keys(SpawnSpec.shape);

/** `POST /spawn`: the new thread. */
export const SpawnResult = z.object({ threadId: z.string().min(1) });
export type SpawnResult = z.infer<typeof SpawnResult>;

export const PostMessage = z
  .object({
    text: z.string(),
    hold: z.boolean().optional(),
    onBusy: z.enum(ON_BUSY).optional(),
    /** The seat the message is for; absent, the seat that holds the thread answers it. */
    seat: SeatName.optional(),
    /** Files and images for the turn (docs/api.md, "Attachments"). */
    attachments: Attachments.optional(),
    // "loop" marks a loop's own prompts (src/api/turns.ts LOOP_SENDER).
    from: z.string().min(1).max(200).refine((f) => f !== "loop" && f !== "runtime", "from: \"loop\" and \"runtime\" are reserved").optional(),
  })
  .strict();
export type PostMessage = z.infer<typeof PostMessage>;

/** Edits a held message; `hold: false` releases it to the thread. */
export const PatchMessage = z
  .object({
    text: z.string().optional(),
    hold: z.literal(false).optional(),
  })
  .strict()
  .refine((b) => b.text !== undefined || b.hold !== undefined, "give text, hold: false, or both");
export type PatchMessage = z.infer<typeof PatchMessage>;

/** `PUT /threads/:id/seat-lease`: who holds the thread's seat, or null to free it. */
export const SeatLease = z.object({ seatLease: z.string().min(1).max(200).nullable() }).strict();

/** What a write to the log answers: the seq and time of the event it wrote (the last, when it wrote two). */
export const MessageAccepted = z.object({ seq: z.number().int().positive(), ts: z.string() });
export type MessageAccepted = z.infer<typeof MessageAccepted>;

/** `POST /threads/:id/messages`: the message's event; `replayed` when an Idempotency-Key seen before answered it, and nothing was written. */
export const PostedMessage = MessageAccepted.extend({ replayed: z.literal(true).optional() });
export type PostedMessage = z.infer<typeof PostedMessage>;

/** `DELETE /threads/:id`: the `archive` event. */
export const ThreadRetired = MessageAccepted.extend({ archived: z.literal(true) });

/** `POST /threads/:id/restore`: the `restore` event. */
export const ThreadRestored = MessageAccepted.extend({ archived: z.literal(false) });

export const THREAD_STAGES = ["idle", "running", "waiting", "degraded", "finished"] as const;

/**
 * Roles whose threads are seats that end: such a thread is `finished` once the seat that
 * held its lease let it go and no turn runs, and the list leaves it out unless `seats=all`.
 */
export const FINISHING_ROLES: readonly string[] = ["reviewer", "fixer"];
export type ThreadStage = (typeof THREAD_STAGES)[number];

export const Cost = z.object({
  /** The priced calls only; `unpricedCalls` says how many calls had no price. */
  usd: z.number(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** Model calls whose usage came without a price (`usage.usd: null`): their spend is not in `usd`. */
  unpricedCalls: z.number().int().nonnegative().optional(),
});
export type Cost = z.infer<typeof Cost>;

/** What `GET /threads` lists: one row per thread, kept by the catalog. */
export const ThreadSummary = z.object({
  id: z.string().min(1),
  title: z.string().nullable(),
  role: z.enum(ROLES),
  type: z.enum(THREAD_TYPES),
  workspace: z.string().nullable(),
  parent: z.string().nullable(),
  /** The engine and model turns run on now: the spec's, or a fallback after a failover. */
  engine: z.enum(ENGINES),
  model: z.string(),
  stage: z.enum(THREAD_STAGES),
  archived: z.boolean(),
  seatLease: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastSeq: z.number().int().nonnegative(),
  cost: Cost,
  /** A thread that works on a pull request: its room's reviewer, or a build thread (docs/rooms.md). */
  pr: z.object({ repo: z.string(), number: z.number().int().positive(), room: z.string().nullable(), worktree: z.string() }).optional(),
});
export type ThreadSummary = z.infer<typeof ThreadSummary>;

/** A spec as rows and the log show it: `proxyEnv` by its variable names only. */
export const ShownSpec = ThreadSpec.omit({ proxyEnv: true }).extend({ proxyEnv: z.array(z.string()).nullable() });
export type ShownSpec = z.infer<typeof ShownSpec>;

/** `GET /threads/:id`: the summary plus the full spec and the archive details. */
export const ThreadRow = ThreadSummary.extend({
  spec: ShownSpec,
  forkedAtSeq: z.number().int().positive().nullable(),
  /** The running turn, if any. */
  turn: z.object({ turnId: z.string(), index: z.number().int().positive(), startedAt: z.string() }).nullable(),
  /** Turns started so far. */
  turns: z.number().int().nonnegative(),
  /** Set while the thread refuses turns because a body could not be saved. */
  degraded: z.object({ key: z.string(), index: z.number().int(), tag: z.string() }).nullable(),
  archivedAt: z.string().nullable(),
  archiveReason: z.string().nullable(),
  /** The seqs of the messages held back from turns. */
  heldMessages: z.array(z.number().int().positive()),
});
export type ThreadRow = z.infer<typeof ThreadRow>;

/** `GET /threads/:id/head`: who the thread is, without its state. */
export const ThreadHead = z.object({
  id: z.string().min(1),
  type: z.enum(THREAD_TYPES),
  role: z.enum(ROLES),
  workspace: z.string().nullable(),
  parent: z.string().nullable(),
  seatLease: z.string().nullable(),
  title: z.string().nullable(),
  createdAt: z.string(),
});
export type ThreadHead = z.infer<typeof ThreadHead>;

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

export const ThreadListPage = z.object({
  threads: z.array(ThreadSummary),
  /** The cursor of the next page, null at the end. */
  nextAfter: z.string().nullable(),
  hasMore: z.boolean(),
});
export type ThreadListPage = z.infer<typeof ThreadListPage>;

export const ListThreadsQuery = z.object({
  limit: z.string().optional(),
  after: z.string().optional(),
  sort: z.enum(["created", "recent"]).optional(),
  archived: z.enum(["live", "archived", "all"]).optional(),
  role: z.enum(ROLES).optional(),
  type: z.enum(THREAD_TYPES).optional(),
  workspace: z.string().optional(),
  parent: z.string().optional(),
  attached: z.enum(["true", "false"]).optional(),
  seats: z.enum(["open", "all"]).optional(),
});

export interface ListThreadsFilter {
  limit: number;
  after: string | null;
  sort: "created" | "recent";
  archived: "live" | "archived" | "all";
  role?: string;
  type?: string;
  workspace?: string;
  parent?: string;
  attached?: boolean;
  seats: "open" | "all";
}
