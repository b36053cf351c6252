import { z } from "zod";

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

export interface PullRef {
  ref: string;
  sha: string;
}

export interface PullSummary {
  number: number;
  title: string;
  body: string;
  author: string;
  /** `merged` is a closed pull request whose work was merged. */
  state: "open" | "closed" | "merged";
  draft: boolean;
  head: PullRef;
  base: PullRef;
  labels: string[];
  createdAt: string;
  updatedAt: string;
  url: string;
}

export interface PullsPage {
  repo: string;
  prs: PullSummary[];
  nextCursor: string | null;
}

/** One hunk's place: the base lines it replaces and the head lines it leaves. */
export interface HunkRange {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

export interface DiffFile {
  path: string;
  /** The path before a rename. */
  previousPath: string | null;
  status: "added" | "modified" | "removed" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  /** The file's hunks as unified diff text; null when the host gives none (a binary file, a diff too large). */
  patch: string | null;
  hunks: HunkRange[];
}

export interface DiffPage {
  repo: string;
  number: number;
  head: PullRef;
  base: PullRef;
  files: DiffFile[];
  nextCursor: string | null;
}

export interface PullComment {
  id: number;
  /** `comment` on the conversation, `review-comment` on a line of the diff, `review` a submitted review's body and verdict. */
  kind: "comment" | "review-comment" | "review";
  author: string;
  body: string;
  createdAt: string;
  url: string;
  /** For a review comment: the file and line it is on. */
  path?: string;
  line?: number | null;
  /** For a review: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING. */
  state?: string;
}

export interface CommentsPage {
  repo: string;
  number: number;
  comments: PullComment[];
  nextCursor: string | null;
}

export interface PullCheck {
  name: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  /** Null until the check completes. */
  conclusion: string | null;
  url: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface ChecksPage {
  repo: string;
  number: number;
  /** The head commit the checks ran on. */
  sha: string;
  total: number;
  checks: PullCheck[];
  nextCursor: string | null;
}

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

export interface OverlapEvidence {
  /** Files both change (renames followed), apart from ones nearly every change touches. */
  sharedFiles: string[];
  /** Hunks of the two that replace overlapping base lines. */
  overlappingHunks: { path: string; older: string; newer: string }[];
  /** 0..1: how much of the changed base lines of the smaller change the other also changes. */
  lineOverlap: number;
  /** 0..1: the same lines added by both. */
  addedSimilarity: number;
  /** 0..1: titles and descriptions in common. */
  textSimilarity: number;
}

export interface OverlapPair {
  older: number;
  newer: number;
  relation: OverlapRelation;
  /** 0..1. */
  score: number;
  evidence: OverlapEvidence;
  /**
   * What the pass does about it: a duplicate gets a comment on the newer pull request
   * naming the older, and the `possible-duplicate` label. `would-act` in a dry run,
   * `acted` when it did, `done-before` when an earlier pass did; `not-permitted` when
   * it should have acted but the account may not write there (`notPermitted` says why);
   * `none` for a complementary pair.
   */
  action: "would-act" | "acted" | "done-before" | "not-permitted" | "none";
}

export interface OverlapAnswer {
  repo: string;
  /** False: a dry run (SERVICE_PR_OVERLAP is not `on`). */
  acting: boolean;
  /** Open pull requests the pass compared. */
  considered: number;
  pairs: OverlapPair[];
  /**
   * Only when an acting pass could not act: the code host refused the account's writes
   * (`code-host-forbidden`), naming the account, never its token. Nothing was written.
   */
  notPermitted?: { error: string; code: string };
}

/** The label a duplicate gets, and the marker in the comment that says a pass already acted on a pair. */
export const OVERLAP_LABEL = "possible-duplicate";
export const overlapMarker = (older: number, newer: number): string => `<!-- agent-runtime overlap ${older}/${newer} -->`;
