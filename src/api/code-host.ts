import * as z from "zod";

/**
 * Reads of pull requests on the code host (docs/code-host.md), in the runtime's own shapes
 * rather than GitHub's JSON, and the overlap pass. The front's code service answers them
 * behind the `CODE` binding with the code-host account's token, which stays on the host.
 */
export const Owner = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, "an owner is letters, digits and -");
export const RepoName = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "a repository name is letters, digits, _ . -").refine((r) => r !== "." && r !== "..", "not . or ..");

export const RepoParams = z.object({ owner: Owner, repo: RepoName }).strict();
export const PullParams = RepoParams.extend({ number: z.coerce.number().int().min(1).max(2 ** 31 - 1) }).strict();
export type PullParams = z.infer<typeof PullParams>;

/**
 * A page of a code-host list: the `nextCursor` of the page before, and the page's size
 * (the first page's; a cursor carries its own, and a different `limit` beside it is refused).
 */
const limit = z.coerce.number().int().min(1).max(100).optional();
/** `<page>.<size>`: the host's page number and page size. */
const PAGE_CURSOR = /^\d{1,6}\.\d{1,3}$/;
/** The comments' cursor names which of the three lists it is in: `c` the conversation, `r` review comments, `v` reviews. */
const COMMENTS_CURSOR = /^[crv]\d{1,6}\.\d{1,3}$/;
const cursor = (pattern: RegExp) => z.string().regex(pattern, "a cursor is a nextCursor this route answered").optional();

export const PullsQuery = z.object({ state: z.enum(["open", "closed", "all"]).optional(), cursor: cursor(PAGE_CURSOR), limit }).strict();
export type PullsQuery = z.infer<typeof PullsQuery>;
export const PageQuery = z.object({ cursor: cursor(PAGE_CURSOR), limit }).strict();
export type PageQuery = z.infer<typeof PageQuery>;
export const CommentsQuery = z.object({ cursor: cursor(COMMENTS_CURSOR), limit }).strict();
export type CommentsQuery = z.infer<typeof CommentsQuery>;

/** A branch of a pull request and the commit it is at. */
export const PullRef = z.object({ ref: z.string(), sha: z.string() });
export type PullRef = z.infer<typeof PullRef>;

export const PULL_STATES = ["open", "closed", "merged"] as const;

export const PullSummary = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string(),
  author: z.string(),
  /** `merged` is a closed pull request whose work was merged. */
  state: z.enum(PULL_STATES),
  draft: z.boolean(),
  head: PullRef,
  base: PullRef,
  labels: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  url: z.string(),
});
export type PullSummary = z.infer<typeof PullSummary>;

/** `GET /github/:owner/:repo/prs`. */
export const PullsPage = z.object({ repo: z.string(), prs: z.array(PullSummary), nextCursor: z.string().nullable() });
export type PullsPage = z.infer<typeof PullsPage>;

/** One hunk's place: the base lines it replaces and the head lines it leaves. */
export const HunkRange = z.object({ oldStart: z.number().int(), oldLines: z.number().int(), newStart: z.number().int(), newLines: z.number().int() });
export type HunkRange = z.infer<typeof HunkRange>;

export const DIFF_FILE_STATUSES = ["added", "modified", "removed", "renamed", "copied", "changed", "unchanged"] as const;

export const DiffFile = z.object({
  path: z.string(),
  /** The path before a rename. */
  previousPath: z.string().nullable(),
  status: z.enum(DIFF_FILE_STATUSES),
  additions: z.number().int(),
  deletions: z.number().int(),
  /** The file's hunks as unified diff text; null when the host gives none (a binary file, a diff too large). */
  patch: z.string().nullable(),
  hunks: z.array(HunkRange),
});
export type DiffFile = z.infer<typeof DiffFile>;

/** `GET /github/:owner/:repo/prs/:number/diff`. */
export const DiffPage = z.object({ repo: z.string(), number: z.number().int(), head: PullRef, base: PullRef, files: z.array(DiffFile), nextCursor: z.string().nullable() });
export type DiffPage = z.infer<typeof DiffPage>;

export const PULL_COMMENT_KINDS = ["comment", "review-comment", "review"] as const;

export const PullComment = z.object({
  id: z.number().int(),
  /** `comment` on the conversation, `review-comment` on a line of the diff, `review` a submitted review's body and verdict. */
  kind: z.enum(PULL_COMMENT_KINDS),
  author: z.string(),
  body: z.string(),
  createdAt: z.string(),
  url: z.string(),
  /** For a review comment: the file and line it is on. */
  path: z.string().optional(),
  line: z.number().int().nullable().optional(),
  /** For a review: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING. */
  state: z.string().optional(),
});
export type PullComment = z.infer<typeof PullComment>;

/** `GET /github/:owner/:repo/prs/:number/comments`. */
export const CommentsPage = z.object({ repo: z.string(), number: z.number().int(), comments: z.array(PullComment), nextCursor: z.string().nullable() });
export type CommentsPage = z.infer<typeof CommentsPage>;

export const CHECK_STATUSES = ["queued", "in_progress", "completed", "waiting", "requested", "pending"] as const;

export const PullCheck = z.object({
  name: z.string(),
  status: z.enum(CHECK_STATUSES),
  /** Null until the check completes. */
  conclusion: z.string().nullable(),
  url: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
});
export type PullCheck = z.infer<typeof PullCheck>;

/** `GET /github/:owner/:repo/prs/:number/checks`. */
export const ChecksPage = z.object({
  repo: z.string(),
  number: z.number().int(),
  /** The head commit the checks ran on. */
  sha: z.string(),
  total: z.number().int(),
  checks: z.array(PullCheck),
  nextCursor: z.string().nullable(),
});
export type ChecksPage = z.infer<typeof ChecksPage>;

export const OverlapBody = z
  .object({
    /** `owner/repo`. */
    repo: z.string().refine((v) => {
      const [owner, name, ...rest] = v.split("/");
      return rest.length === 0 && Owner.safeParse(owner).success && RepoName.safeParse(name).success;
    }, "repo is owner/name: letters, digits and - for the owner; letters, digits, _ . - for the name, not . or .."),
    /** Open pull requests considered, newest first (default 100). */
    limit: z.number().int().min(2).max(300).optional(),
  })
  .strict();
export type OverlapBody = z.infer<typeof OverlapBody>;

/** What the worker asks the code service: the pass, and whether to act (SERVICE_PR_OVERLAP). */
export const OverlapRequest = OverlapBody.extend({ act: z.boolean() });
export type OverlapRequest = z.infer<typeof OverlapRequest>;

export const OVERLAP_RELATIONS = ["duplicate", "complementary"] as const;
export type OverlapRelation = (typeof OVERLAP_RELATIONS)[number];

export const OverlapEvidence = z.object({
  /** Files both change (renames followed), apart from ones nearly every change touches. */
  sharedFiles: z.array(z.string()),
  /** Hunks of the two that replace overlapping base lines. */
  overlappingHunks: z.array(z.object({ path: z.string(), older: z.string(), newer: z.string() })),
  /** 0..1: how much of the changed base lines of the smaller change the other also changes. */
  lineOverlap: z.number(),
  /** 0..1: the same lines added by both. */
  addedSimilarity: z.number(),
  /** 0..1: titles and descriptions in common. */
  textSimilarity: z.number(),
});
export type OverlapEvidence = z.infer<typeof OverlapEvidence>;

export const OVERLAP_ACTIONS = ["would-act", "acted", "done-before", "not-permitted", "none"] as const;

export const OverlapPair = z.object({
  older: z.number().int(),
  newer: z.number().int(),
  relation: z.enum(OVERLAP_RELATIONS),
  /** 0..1. */
  score: z.number(),
  evidence: OverlapEvidence,
  /**
   * What the pass does about it: a duplicate gets a comment on the newer pull request
   * naming the older, and the `possible-duplicate` label. `would-act` in a dry run,
   * `acted` when it did, `done-before` when an earlier pass did; `not-permitted` when
   * it should have acted but the account may not write there (`notPermitted` says why);
   * `none` for a complementary pair.
   */
  action: z.enum(OVERLAP_ACTIONS),
});
export type OverlapPair = z.infer<typeof OverlapPair>;

/** `POST /github/overlap`: one pass's pairs and what it did about them. */
export const OverlapAnswer = z.object({
  repo: z.string(),
  /** False: a dry run (SERVICE_PR_OVERLAP is not `on`). */
  acting: z.boolean(),
  /** Open pull requests the pass compared. */
  considered: z.number().int(),
  pairs: z.array(OverlapPair),
  /**
   * Only when an acting pass could not act: the code host refused the account's writes
   * (`code-host-forbidden`), naming the account, never its token. Nothing was written.
   */
  notPermitted: z.object({ error: z.string(), code: z.string() }).optional(),
});
export type OverlapAnswer = z.infer<typeof OverlapAnswer>;

/** The label a duplicate gets, and the marker in the comment that says a pass already acted on a pair. */
export const OVERLAP_LABEL = "possible-duplicate";
export const overlapMarker = (older: number, newer: number): string => `<!-- agent-runtime overlap ${older}/${newer} -->`;
