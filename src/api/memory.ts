import * as z from "zod";

/**
 * Workspace memory (docs/memory.md): what a workspace's agents learn and keep across
 * threads. A `fact` is a statement that stays true until corrected; an `episode` is what
 * happened once (a run, an incident, a decision and its reason); a `reflection` is the
 * curator model's conclusion drawn from other memories, which it cites.
 */
export const MEMORY_KINDS = ["fact", "episode", "reflection"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Stored text beyond this is refused where it is stored, raising the memory alert (a size limit is a retain that cannot be stored). */
export const MEMORY_MAX_CHARS = 8000;

export const MemoryTag = z.string().regex(/^[a-z0-9][a-z0-9:_./-]{0,63}$/, "lowercase letters, digits and : _ . / -, at most 64");

/** `POST /workspaces/:name/memory/retain`. */
export const Retain = z
  .object({
    // Longer text is refused by the workspace itself (413 memory-too-large), so that it raises the alert.
    text: z.string().min(1).max(200_000),
    kind: z.enum(["fact", "episode"]).optional(),
    key: z.string().min(1).max(200).optional(),
    tags: z.array(MemoryTag).max(16).optional(),
    importance: z.number().min(0).max(1).optional(),
    supersedes: z.string().min(1).max(100).optional(),
    thread: z.string().min(1).max(100).optional(),
    seq: z.number().int().positive().optional(),
  })
  .strict();
export type Retain = z.infer<typeof Retain>;

/** `POST /workspaces/:name/memory/recall`. */
export const Recall = z
  .object({
    query: z.string().min(1).max(4000),
    budgetTokens: z.number().int().min(1).max(32_000).optional(),
    tags: z.array(MemoryTag).max(16).optional(),
    includeRetired: z.boolean().optional(),
  })
  .strict();
export type Recall = z.infer<typeof Recall>;

/** `POST /workspaces/:name/memory/reflect`: at most `limit` of the newest memories are read. */
export const Reflect = z.object({ limit: z.number().int().min(2).max(200).optional() }).strict();
export type Reflect = z.infer<typeof Reflect>;

/** `PATCH /workspaces/:name/memory/:id`: a person's correction in place; `retired: true` retires it, `false` brings it back. */
export const EditMemory = z
  .object({
    text: z.string().min(1).max(200_000).optional(),
    key: z.string().min(1).max(200).nullable().optional(),
    tags: z.array(MemoryTag).max(16).optional(),
    importance: z.number().min(0).max(1).optional(),
    retired: z.boolean().optional(),
  })
  .strict();
export type EditMemory = z.infer<typeof EditMemory>;

/** `GET /workspaces/:name/memory` and `GET /threads/:id/memory`. */
export const MemoryQuery = z
  .object({
    kind: z.enum(MEMORY_KINDS).optional(),
    tag: MemoryTag.optional(),
    thread: z.string().min(1).max(100).optional(),
    /** `only`: retired ones; `include`: both; `exclude`: active ones (the default, but for a thread's list). */
    retired: z.enum(["only", "include", "exclude"]).optional(),
    /** A page goes from the newest back; `before` is the `nextBefore` of the page before. */
    before: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();
export type MemoryQuery = z.infer<typeof MemoryQuery>;

/** `GET /threads/:id/memory`: the thread is the path's. */
export const ThreadMemoryQuery = MemoryQuery.omit({ thread: true });

export const Memory = z.object({
  id: z.string(),
  kind: z.enum(MEMORY_KINDS),
  text: z.string(),
  key: z.string().nullable(),
  tags: z.array(z.string()),
  importance: z.number(),
  /** Where it came from: the thread that recorded it and the event it rests on. */
  thread: z.string().nullable(),
  seq: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Set once it no longer holds: superseded by a newer memory (`by`), or retired by a person. */
  retired: z.object({ at: z.string(), by: z.string().nullable(), reason: z.enum(["superseded", "key", "person"]) }).nullable(),
  /** A reflection's sources. */
  cites: z.array(z.string()),
});
export type Memory = z.infer<typeof Memory>;

/** `POST /workspaces/:name/memory/retain`: 201 stored, or 200 the same text kept already. */
export const Retained = z.object({
  id: z.string(),
  memory: Memory,
  /** The same text was already kept: that memory is the answer, and nothing was stored. */
  duplicate: z.boolean(),
  /** Memories this one retired, by its key or its `supersedes`. */
  retired: z.array(z.string()),
});
export type Retained = z.infer<typeof Retained>;

/** `POST /workspaces/:name/memory/recall`: best first, each with its score and what it costs of the budget. */
export const Recalled = z.object({
  memories: z.array(Memory.extend({ score: z.number(), tokens: z.number().int() })),
  budgetTokens: z.number().int(),
  usedTokens: z.number().int(),
});
export type Recalled = z.infer<typeof Recalled>;

/** `GET /workspaces/:name/memory` and `GET /threads/:id/memory`: newest first; `nextBefore` is the next page's `before`. */
export const MemoryPage = z.object({ memories: z.array(Memory), nextBefore: z.number().int().nullable() });
export type MemoryPage = z.infer<typeof MemoryPage>;

export const Reflected = z.object({
  reflections: z.array(Memory),
  /** Citations the model gave that name no memory it read: dropped, with the reflection when none was left. */
  droppedCitations: z.array(z.string()),
  /** Null when there was too little memory to reflect on (fewer than two). */
  model: z.string().nullable(),
});
export type Reflected = z.infer<typeof Reflected>;

/** `DELETE /workspaces/:name/memory/:id`: gone for good. */
export const MemoryForgotten = z.object({ id: z.string(), forgotten: z.literal(true) });

/** `GET /health`'s `memoryAlert`: the last retain that could not be stored, until a later one is. */
export const MemoryAlert = z.object({ workspace: z.string(), since: z.string(), code: z.string(), error: z.string() });
export type MemoryAlert = z.infer<typeof MemoryAlert>;
