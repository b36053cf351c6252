import * as z from "zod";
import { AnyJson } from "./engine.js";

/**
 * The cycle events a review or merge flow records on its thread (`POST /threads/:id/events`,
 * docs/operations.md "Cycle events"): a step of the flow starting and finishing, a child
 * joining it and ending, a check's result, a review and its verdict, and a free note.
 */
export const CYCLE_KINDS = ["step-started", "step-finished", "child-started", "child-finished", "check", "review", "verdict", "note"] as const;
export type CycleKind = (typeof CYCLE_KINDS)[number];

export const CycleEvent = z
  .object({
    kind: z.enum(CYCLE_KINDS),
    step: z.string().min(1).max(200).optional(),
    child: z.string().min(1).max(100).optional(),
    status: z.enum(["started", "passed", "failed", "skipped", "approved", "changes-requested"]).optional(),
    text: z.string().max(8000).optional(),
    data: AnyJson.optional(),
  })
  .strict();
export type CycleEvent = z.infer<typeof CycleEvent>;

/** A check a gate weighs besides the children: its name and whether it passed. */
const Check = z.object({ name: z.string().min(1).max(200), ok: z.boolean(), detail: z.string().max(2000).optional() }).strict();

/**
 * `POST /threads/:id/gate`. `auto` decides from the children (the thread's delegations, or
 * those `operations` names) and the `checks`; `human` opens an approval (and with it an
 * attention item) and answers once a person decided, or at once with `async: true`.
 */
export const GateRequest = z
  .object({
    mode: z.enum(["auto", "human"]),
    step: z.string().min(1).max(200).optional(),
    operations: z.array(z.string().min(1).max(100)).max(200).optional(),
    checks: z.array(Check).max(200).optional(),
    question: z.string().max(4000).optional(),
    async: z.boolean().optional(),
  })
  .strict();
export type GateRequest = z.infer<typeof GateRequest>;

/** A gate's answer: a refusal is `passed: false` with its `reasons`, a normal 200, never an error status. */
export const GateResult = z.object({
  gate: z.string(),
  mode: z.enum(["auto", "human"]),
  step: z.string().nullable(),
  /** Null while a human gate waits (`async: true`). */
  passed: z.boolean().nullable(),
  reasons: z.array(z.string()),
  /** A human gate's approval, answered at `POST /threads/:id/approvals/:approvalId`. */
  approvalId: z.string().optional(),
  seq: z.number().int(),
});
export type GateResult = z.infer<typeof GateResult>;

/** `POST /threads/:id/merge`: a child's work (its branch, in its working directory) into this thread's checkout. */
export const MergeRequest = z.object({ child: z.string().min(1).max(100) }).strict();

export const MergeResult = z.object({
  child: z.string(),
  /** The child's head that was merged (or was merged already). */
  head: z.string(),
  /** The merge commit in the parent's checkout; null when nothing was merged. */
  commit: z.string().nullable(),
  alreadyMerged: z.boolean(),
  seq: z.number().int(),
});
export type MergeResult = z.infer<typeof MergeResult>;

/** The engine host's answer to `POST /merges`: what the merge did, before the Thread records it. */
export type Merged = Omit<MergeResult, "child" | "seq">;

/** Body of `POST /merges` on the engine host: git work in two working directories of this machine. */
export interface MergeWork {
  into: string;
  from: string;
  message: string;
  /** `into` is a worktree the runtime made for a pull request's thread (the thread's `spec.worktree`). */
  worktree?: "review" | "build";
}
