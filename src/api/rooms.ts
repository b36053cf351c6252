import * as z from "zod";
import type { PullRef, PullSummary } from "./code-host.js";
import { Owner, RepoName } from "./code-host.js";
import { ENGINES, PERMISSIONS, SeatName } from "./threads.js";

/**
 * Review rooms and pull requests (docs/rooms.md): a room per pull request of a workspace,
 * its reviewer seat on a thread of its own, rounds with verdicts the reviewer returns
 * through the `submit_verdict` tool, finalize (one review on the code host), build threads
 * in a worktree of the pull request's branch, and the read-only merge receipt.
 */

/** `owner/name`, as GitHub spells a repository. */
export const RepoSlug = z.string().refine((v) => {
  const [owner, name, ...rest] = v.split("/");
  return rest.length === 0 && Owner.safeParse(owner).success && RepoName.safeParse(name).success;
}, "repo is owner/name: letters, digits and - for the owner; letters, digits, _ . - for the name, not . or ..");

export const PrNumber = z.number().int().min(1).max(2 ** 31 - 1);

/** The seat a room's reviewer sits in when the arm names none. */
export const DEFAULT_REVIEWER_SEAT = "reviewer";

export const ArmRoom = z
  .object({
    repo: RepoSlug,
    pr: PrNumber,
    /** The reviewer seat's engine and model; the workspace's defaults otherwise. */
    engine: z.enum(ENGINES).optional(),
    model: z.string().min(1).max(200).optional(),
    /** The reviewer seat's name (default `reviewer`). */
    seat: SeatName.optional(),
  })
  .strict();
export type ArmRoom = z.infer<typeof ArmRoom>;

export const StartRound = z
  .object({
    /** What this round should look at, beyond the pull request itself; `@sim` lines script the simulator. */
    prompt: z.string().max(100_000).optional(),
    /** Which of the room's seats reviews (default: the room's reviewer seat). */
    seat: SeatName.optional(),
  })
  .strict();
export type StartRound = z.infer<typeof StartRound>;

export const Finalize = z.object({ n: z.number().int().min(1).optional() }).strict();
export type Finalize = z.infer<typeof Finalize>;

export const DECISIONS = ["approve", "request_changes", "comment"] as const;
export const SEVERITIES = ["critical", "major", "minor", "nit"] as const;
export const SIDES = ["RIGHT", "LEFT"] as const;

/** One finding as the reviewer gives it: a line of the pull request's head (RIGHT) or base (LEFT). */
export const FindingInput = z
  .object({
    path: z.string().min(1).max(1000).describe("The file, as the diff names it"),
    line: z.number().int().min(1).describe("The line in the head's version of the file (side RIGHT), or the base's (side LEFT)"),
    side: z.enum(SIDES).optional().describe("RIGHT (default): the head's line; LEFT: a line the pull request removes"),
    severity: z.enum(SEVERITIES),
    body: z.string().min(1).max(20_000).describe("What is wrong there and what to do about it"),
    sameAs: z
      .string()
      .regex(/^[0-9a-f]{8,64}$/)
      .optional()
      .describe("When this is a finding an earlier round raised (listed in the round's message with its fingerprint), that fingerprint: it is then the same finding, however you word it now"),
  })
  .strict();
export type FindingInput = z.infer<typeof FindingInput>;

/** The `submit_verdict` tool's input: the one way a reviewer returns its verdict (never parsed from prose). */
export const SubmitVerdictInput = z
  .object({
    decision: z.enum(DECISIONS),
    summary: z.string().min(1).max(60_000).describe("The review's overall judgement, as its body"),
    findings: z.array(FindingInput).max(200).default([]),
  })
  .strict();
export type SubmitVerdictInput = z.infer<typeof SubmitVerdictInput>;

export const Finding = z.object({
  path: z.string(),
  line: z.number().int(),
  side: z.enum(SIDES),
  severity: z.enum(SEVERITIES),
  body: z.string(),
  /**
   * Stable across rounds for the same path, the same code at the line and the same gist
   * (docs/rooms.md, "Fingerprints"), or the earlier finding's when the reviewer says it is
   * that one again (`sameAs`).
   */
  fingerprint: z.string(),
});
export type Finding = z.infer<typeof Finding>;

/** A finding an earlier round of the room raised, as a round's message lists it for the reviewer to name again (`sameAs`). */
export type EarlierFinding = Pick<Finding, "path" | "line" | "side" | "severity" | "body" | "fingerprint">;

export const Verdict = z.object({
  decision: z.enum(DECISIONS),
  summary: z.string(),
  findings: z.array(Finding),
  /** The turn and seat that submitted it. */
  turnId: z.string(),
  seat: z.string(),
  submittedAt: z.string(),
});
export type Verdict = z.infer<typeof Verdict>;

export const ROUND_STATES = ["running", "ready", "failed", "finalized", "superseded"] as const;
export type RoundState = (typeof ROUND_STATES)[number];

export const PostedReview = z.object({
  /** The code host's review id. */
  id: z.number().int(),
  /** Findings posted as inline comments. */
  posted: z.number().int(),
  /** Findings the code host could not anchor (outside the diff), written in the review's body instead. */
  inBody: z.number().int(),
  /** Findings already on an unresolved review thread of the pull request, not posted again. */
  skipped: z.number().int(),
  url: z.string().nullable(),
  /** The commit the review is on: the round's head. */
  commitId: z.string(),
  postedAt: z.string(),
});
export type PostedReview = z.infer<typeof PostedReview>;

/** A review round (`GET /rooms/:id/rounds/:n`). */
export const Round = z.object({
  n: z.number().int(),
  state: z.enum(ROUND_STATES),
  prompt: z.string().nullable(),
  seat: z.string(),
  head: z.string(),
  base: z.string(),
  threadId: z.string(),
  /** The message that asked for it, in the thread's log. */
  messageSeq: z.number().int().nullable(),
  verdict: Verdict.nullable(),
  /** Why a failed round failed. */
  failure: z.string().nullable(),
  review: PostedReview.nullable(),
  createdAt: z.string(),
  readyAt: z.string().nullable(),
});
export type Round = z.infer<typeof Round>;

/** One of the room thread's active seats. */
export const RoomSeat = z.object({ name: z.string(), engine: z.enum(ENGINES), model: z.string(), role: z.string().nullable() });
export type RoomSeat = z.infer<typeof RoomSeat>;

export const ROOM_STATES = ["arming", "armed"] as const;

export const RoundBrief = z.object({ n: z.number().int(), state: z.enum(ROUND_STATES), head: z.string(), createdAt: z.string() });
export type RoundBrief = z.infer<typeof RoundBrief>;

/** A review room (`GET /rooms/:id`). */
export const Room = z.object({
  id: z.string(),
  /** `<workspace>/<owner>/<name>#<pr>`: arming the same pull request in the same workspace adopts the room. */
  key: z.string(),
  workspace: z.string(),
  repo: z.string(),
  pr: z.number().int(),
  /** `arming` until its thread and reviewer seat exist. */
  state: z.enum(ROOM_STATES),
  /** The room's thread: its seats review. */
  threadId: z.string().nullable(),
  /** The seat a round uses when it names none. */
  reviewerSeat: z.string(),
  seats: z.array(RoomSeat),
  rounds: z.array(RoundBrief),
  createdAt: z.string(),
});
export type Room = z.infer<typeof Room>;

/** `POST /workspaces/:name/rooms` and `GET /rooms/:id`. */
export const RoomOnly = z.object({ room: Room });

/** `GET /workspaces/:name/rooms`: the room and its newest round (null before the first). */
export const RoomFound = z.object({ room: Room, round: Round.nullable() });

/** `POST /rooms/:id/rounds` and `GET /rooms/:id/rounds/:n`. */
export const RoundOnly = z.object({ round: Round });

/** `POST /rooms/:id/finalize`: the review on the code host (a round posted before answers its review again). */
export const ReviewPosted = z.object({ review: PostedReview });

/** What the Room object keeps of a room: all but its seats, which its thread holds. */
export interface RoomCore extends Omit<Room, "seats"> {
  /** When the arm that is making its thread began: an arm that died midway is taken over once this is old. */
  armingSince: string | null;
}

export const roomKey = (workspace: string, repo: string, pr: number): string => `${workspace}/${repo.toLowerCase()}#${pr}`;

/** `GET /rooms/capabilities`. */
export const Capabilities = z.object({ verdictPoster: z.object({ available: z.boolean(), reason: z.string().optional() }) });
export type Capabilities = z.infer<typeof Capabilities>;

export const RoomQuery = z.object({ repo: RepoSlug, pr: z.coerce.number().int().min(1).max(2 ** 31 - 1) }).strict();

export const BuildAgent = z
  .object({
    repo: RepoSlug,
    title: z.string().max(200).optional(),
    engine: z.enum(ENGINES).optional(),
    model: z.string().min(1).max(200).optional(),
    permissions: z.enum(PERMISSIONS).optional(),
  })
  .strict();
export type BuildAgent = z.infer<typeof BuildAgent>;

export const ReceiptQuery = z.object({ repo: RepoSlug }).strict();

/** `POST /workspaces/:name/prs/:number/agents`: the build thread and its worktree's path. */
export const BuildThread = z.object({ threadId: z.string(), worktree: z.string() });

export const ReceiptCheck = z.object({
  name: z.string(),
  status: z.string(),
  conclusion: z.string().nullable(),
  /** Named by the base branch's protection. */
  required: z.boolean(),
});
export type ReceiptCheck = z.infer<typeof ReceiptCheck>;

export const MergeStep = z.object({
  step: z.string(),
  /** How a person or a program does it: a method and path on the code host, or `git`. */
  method: z.string(),
  /** What must hold after it. */
  expects: z.string(),
});
export type MergeStep = z.infer<typeof MergeStep>;

export const BLOCKED_CODES = [
  "approval-missing",
  "changes-requested",
  "check-failing",
  "check-missing",
  "check-pending",
  "protection-unreadable",
  "verdict-stale",
  "verdict-missing",
  "base-not-default",
  "draft",
  "closed",
] as const;

export const Blocked = z.object({ code: z.enum(BLOCKED_CODES), reason: z.string() });
export type Blocked = z.infer<typeof Blocked>;

/** A branch and the commit it points at (the code host's `PullRef`). */
const Ref = z.object({ ref: z.string(), sha: z.string() });

/** `GET /workspaces/:name/prs/:number/receipt`: what merging would take, read only. */
export const Receipt = z.object({
  repo: z.string(),
  pr: z.number().int(),
  head: Ref,
  base: Ref,
  /** The newest finalized or ready round at this exact head, or null. */
  verdict: z
    .object({ roomId: z.string(), n: z.number().int(), state: z.enum(ROUND_STATES), decision: z.enum(DECISIONS), head: z.string(), findings: z.number().int() })
    .nullable(),
  /** The checks at this exact head. */
  checks: z.array(ReceiptCheck),
  /** The branches from this pull request's base down to the default branch, each with the open pull request that carries it there. */
  baseChain: z.array(z.object({ branch: z.string(), pr: z.number().int().nullable() })),
  /** Open pull requests based on this one's branch. */
  stacked: z.array(z.object({ number: z.number().int(), title: z.string(), head: z.string() })),
  plan: z.array(MergeStep),
  blocked: z.array(Blocked),
  /** Nothing blocks: the plan can be carried out as it stands. */
  ready: z.boolean(),
});
export type Receipt = z.infer<typeof Receipt>;

export const PrCost = z.object({
  repo: z.string(),
  pr: z.number().int(),
  workspace: z.string(),
  merged: z.boolean(),
  threads: z.number().int(),
  usd: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  unpricedCalls: z.number().int(),
});
export type PrCost = z.infer<typeof PrCost>;

/** `GET /metrics/cost-per-merged-pr`. */
export const CostPerMergedPr = z.object({
  prs: z.array(PrCost),
  merged: z.object({ count: z.number().int(), usd: z.number(), perPr: z.number().nullable() }),
  all: z.object({ count: z.number().int(), usd: z.number() }),
  /** Pull requests whose state the code host did not tell (counted as not merged). */
  unknown: z.number().int(),
});
export type CostPerMergedPr = z.infer<typeof CostPerMergedPr>;

/* ---- what the worker asks the front's code service (the CODE binding) ---- */

/**
 * `POST /git/worktrees`: fetch the pull request's commits into the runtime's mirror of the
 * repository and make (or move) worktree `id` at its head. `review`: detached at the head,
 * read-only to the session; `build`: on a branch named as the pull request's, writable.
 */
export const WorktreeRequest = z
  .object({
    repo: RepoSlug,
    pr: PrNumber,
    id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
    mode: z.enum(["review", "build"]),
  })
  .strict();
export type WorktreeRequest = z.infer<typeof WorktreeRequest>;

export interface Worktree {
  id: string;
  path: string;
  head: PullRef;
  base: PullRef;
  /** Whether a registered checkout of the repository served as the mirror's reference. */
  reference: string | null;
}

export const WorktreeRemove = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/) }).strict();

/** `POST /git/lines`: the code at each finding's line, for its fingerprint: the head's (RIGHT) or the base's (LEFT) version of the file. Null: no such line. */
export const LinesRequest = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
    head: z.string().regex(/^[0-9a-f]{40,64}$/),
    base: z.string().regex(/^[0-9a-f]{40,64}$/),
    lines: z.array(z.object({ path: z.string().min(1).max(1000), line: z.number().int().min(1), side: z.enum(SIDES) }).strict()).max(500),
  })
  .strict();
export type LinesRequest = z.infer<typeof LinesRequest>;
export interface LinesAnswer {
  texts: (string | null)[];
}

/** `GET /github/:owner/:repo/prs/:number/context`: what a reviewer is given. */
export interface ReviewContext {
  pull: PullSummary;
  files: { path: string; status: string; additions: number; deletions: number; patch: string | null }[];
  /** The conversation, review comments and reviews, oldest first, at most 100. */
  comments: { kind: string; author: string; body: string; path?: string; line?: number | null; state?: string }[];
  /** Whether the lists were cut. */
  truncated: boolean;
}

/** `POST /github/:owner/:repo/prs/:number/review`: one review at `commitId`. */
export const PostReview = z
  .object({
    commitId: z.string().regex(/^[0-9a-f]{40,64}$/),
    decision: z.enum(DECISIONS),
    summary: z.string().min(1),
    findings: z.array(
      z.object({ path: z.string(), line: z.number().int().min(1), side: z.enum(SIDES), severity: z.enum(SEVERITIES), body: z.string(), fingerprint: z.string() }).strict(),
    ),
    /** Names the room and round in the review's body, so a person sees where it came from. */
    source: z.string().max(200),
  })
  .strict();
export type PostReview = z.infer<typeof PostReview>;

/** The marker a posted finding carries in its comment, by which a later finalize knows it is there. */
export const findingMarker = (fingerprint: string): string => `<!-- agent-runtime finding ${fingerprint} -->`;
export const FINDING_MARKER = /<!-- agent-runtime finding ([0-9a-f]{8,64}) -->/;

/** `GET /github/:owner/:repo/prs/:number/merge-facts`: what the receipt is computed from. */
export interface MergeFacts {
  pull: PullSummary;
  defaultBranch: string;
  /** Check runs at the head commit, and the commit statuses there (the older API a required context may report through) under their context names. */
  checks: { name: string; status: string; conclusion: string | null }[];
  /** The base branch's protection, or null when it has none. */
  protection: { requiredChecks: string[]; requiredReviews: number } | null;
  /** Why the protection could not be read (reading it takes admin rights on GitHub), when it could not: then `protection` is null but what it requires is unknown. */
  protectionUnreadable?: string;
  /** The latest review of each reviewer, with the commit it was on. */
  reviews: { author: string; state: string; commitId: string | null }[];
  /** From the base down: each branch and the open pull request that merges it further (null: none, or the default branch). */
  baseChain: { branch: string; pr: number | null }[];
  stacked: { number: number; title: string; head: string }[];
}

/** Build threads one pull request may have at once when the hub names no build seat limit (SERVICE_HUB_URL unset or silent). */
export const DEFAULT_BUILD_SEATS = 2;
