/**
 * What the code-host simulator starts from: repositories, their pull requests and what
 * hangs off them, and the tokens it accepts. A pull request's files come from a real git
 * repository on disk when its repository names one (`git`; the diff is
 * `git diff base...head` there, so it is a real diff), otherwise from the seed's `files`.
 */
import { z } from "zod";

const When = z.string().datetime();
const Login = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$/);

export const SeedFile = z
  .object({
    filename: z.string().min(1),
    status: z.enum(["added", "modified", "removed", "renamed"]).default("modified"),
    previousFilename: z.string().min(1).optional(),
    /** A unified diff of the file, hunks only (from `@@`), as GitHub's `patch` field. */
    patch: z.string().optional(),
  })
  .strict();

export const SeedComment = z.object({ user: Login, body: z.string(), createdAt: When.optional() }).strict();

export const SeedReviewComment = SeedComment.extend({
  path: z.string().min(1),
  line: z.number().int().positive(),
  side: z.enum(["RIGHT", "LEFT"]).default("RIGHT"),
  /** Its thread is resolved, as someone marked it on GitHub. */
  resolved: z.boolean().default(false),
}).strict();

export const SeedReview = z
  .object({
    user: Login,
    state: z.enum(["APPROVED", "CHANGES_REQUESTED", "COMMENTED"]),
    body: z.string().default(""),
    submittedAt: When.optional(),
  })
  .strict();

export const SeedCheck = z
  .object({
    name: z.string().min(1),
    status: z.enum(["queued", "in_progress", "completed"]).default("completed"),
    conclusion: z.enum(["success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"]).nullable().default("success"),
    detailsUrl: z.string().url().optional(),
  })
  .strict();

export const SeedPull = z
  .object({
    number: z.number().int().positive(),
    title: z.string().min(1),
    body: z.string().default(""),
    user: Login,
    state: z.enum(["open", "closed", "merged"]).default("open"),
    draft: z.boolean().default(false),
    /** Branch names; with `git` they must exist in that repository. */
    head: z.string().min(1),
    base: z.string().min(1),
    createdAt: When,
    updatedAt: When.optional(),
    labels: z.array(z.string().min(1)).default([]),
    /** Without `git` on the repository: the files the pull request changes. */
    files: z.array(SeedFile).default([]),
    comments: z.array(SeedComment).default([]),
    reviewComments: z.array(SeedReviewComment).default([]),
    reviews: z.array(SeedReview).default([]),
    /** Check runs on the pull request's head as the simulator starts; a later push has none until some are created. */
    checks: z.array(SeedCheck).default([]),
  })
  .strict();

export const SeedRepo = z
  .object({
    owner: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/),
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/),
    private: z.boolean().default(false),
    defaultBranch: z.string().min(1).default("main"),
    /** A git checkout on disk whose branches the pull requests name. */
    git: z.string().startsWith("/").optional(),
    labels: z.array(z.object({ name: z.string().min(1), color: z.string().regex(/^[0-9a-f]{6}$/).default("ededed"), description: z.string().default("") }).strict()).default([]),
    /** Branch protection by branch name. */
    protection: z.record(z.string(), z.object({ requiredChecks: z.array(z.string()).default([]), requiredReviews: z.number().int().min(0).default(0) }).strict()).default({}),
    pulls: z.array(SeedPull).default([]),
  })
  .strict();

export const Seed = z
  .object({
    /**
     * Tokens the simulator accepts, each with the login it acts as, the owners it may read
     * (empty: every repository) and its access: `write` (the default) may also comment,
     * label and review; `read` is a fine-grained token with read permissions alone.
     */
    tokens: z.record(z.string(), z.object({ login: Login, owners: z.array(z.string()).default([]), access: z.enum(["read", "write"]).default("write") }).strict()).default({}),
    repos: z.array(SeedRepo).default([]),
  })
  .strict();
export type Seed = z.infer<typeof Seed>;
export type SeedRepo = z.infer<typeof SeedRepo>;
export type SeedPull = z.infer<typeof SeedPull>;
