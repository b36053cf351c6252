/**
 * The endpoints: each reads the state, checks its input as GitHub does, and answers in
 * GitHub's shape. The server has already authenticated the caller and counted the request.
 */
import { branchExists, commitOf, comparisonOf, tipsOf, tipsOfOne, type Tips } from "./commits.js";
import { GitHubError, notAccessible, notFound, unprocessable, unsupportedAccept, validationFailed, type FieldError } from "./errors.js";
import { paged } from "./pages.js";
import { answerGraphql } from "./graphql.js";
import { placeInPatch, placeOf, type Comparison, type Side } from "./patch.js";
import * as shape from "./shapes.js";
import { iso, type CheckRun, type Grant, type Pull, type Repo, type ReviewComment, type ReviewState } from "./store.js";

interface Call {
  view: shape.View;
  grant: Grant;
  /** The request's URL, absolute on the origin the client called. */
  url: URL;
  accept: string;
  params: Record<string, string>;
  /** The request body parsed as JSON; throws GitHub's 400 when it is not. */
  json(): unknown;
}

export type Answer = { status: number; headers?: Record<string, string> } & ({ json: unknown } | { text: string; contentType: string });

interface Route {
  method: "GET" | "POST";
  path: string[];
  handle(call: Call): Promise<Answer> | Answer;
}

const REVIEW_EVENTS: Record<string, ReviewState> = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" };

const json = (body: unknown, headers?: Record<string, string>, status = 200): Answer => ({ status, json: body, ...(headers ? { headers } : {}) });

function list<T>(call: Call, all: T[], render: (item: T) => unknown): Answer {
  const page = paged(all, call.url);
  return json(page.items.map(render), page.headers);
}

function repoOf(call: Call): Repo {
  const repo = call.view.store.repo(call.params.owner!, call.params.repo!);
  // A repository the token may not see is missing, not forbidden, as GitHub hides private ones.
  if (!repo || !call.view.store.visible(repo, call.grant)) throw notFound();
  return repo;
}

/**
 * An endpoint that writes: a token that may read the repository but not write gets
 * GitHub's 403 for a fine-grained token without the permission; one that may not see the
 * repository still gets 404, as the repository is looked up first.
 */
function writes(permissions: string, docs: string, handle: Route["handle"]): Route["handle"] {
  return (call) => {
    repoOf(call);
    if (call.grant.access !== "write") throw notAccessible(permissions, `https://docs.github.com/rest/${docs}`);
    return handle(call);
  };
}

/** The permissions GitHub names for writing comments and labels on an issue or a pull request. */
const ISSUE_WRITE = "issues=write; pull_requests=write";

function pullOf(call: Call, repo: Repo): Pull {
  const pull = /^[1-9]\d{0,9}$/.test(call.params.number!) ? repo.pulls.get(Number(call.params.number)) : undefined;
  if (!pull) throw notFound();
  return pull;
}

/** A query parameter limited to GitHub's values; anything else is refused rather than guessed at. */
function choice<T extends string, F>(call: Call, resource: string, name: string, allowed: readonly T[], fallback: F): T | F {
  const value = call.url.searchParams.get(name);
  if (value === null) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw validationFailed({ resource, field: name, code: "invalid", message: `${name} must be one of ${allowed.join(", ")}` });
  return value as T;
}

function bodyObject(call: Call): Record<string, unknown> {
  const body = call.json();
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GitHubError(400, "Body should be a JSON object");
  return body as Record<string, unknown>;
}

function touch(pull: Pull): string {
  return (pull.updatedAt = iso(Date.now()));
}

/** The diff media types Octokit asks with (`mediaType: {format}`); other GitHub formats are not served. */
function mediaFormat(accept: string): "json" | "diff" {
  const format = /application\/vnd\.github(?:\.v3)?\.(diff|patch|sha)\b/.exec(accept)?.[1];
  if (format === undefined) return "json";
  if (format === "diff") return "diff";
  throw unsupportedAccept(accept);
}

async function getPulls(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const state = choice(call, "PullRequest", "state", ["open", "closed", "all"] as const, "open");
  const sort = choice(call, "PullRequest", "sort", ["created", "updated"] as const, "created");
  // GitHub's default direction is newest first only for `created`.
  const direction = choice(call, "PullRequest", "direction", ["asc", "desc"] as const, sort === "created" ? "desc" : "asc");
  const base = call.url.searchParams.get("base");
  // `head` is `owner:branch`; a bare branch is taken as one of this repository's.
  const head = call.url.searchParams.get("head");
  const [headOwner, headBranch] = head?.includes(":") ? [head.slice(0, head.indexOf(":")), head.slice(head.indexOf(":") + 1)] : [repo.owner, head];
  const key = (p: Pull) => (sort === "created" ? p.createdAt : p.updatedAt);
  const pulls = [...repo.pulls.values()]
    .filter((p) => state === "all" || (state === "open") === (p.state === "open"))
    .filter((p) => base === null || p.base === base)
    .filter((p) => headBranch === null || (headOwner.toLowerCase() === repo.owner.toLowerCase() && p.head === headBranch))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.number - b.number) * (direction === "asc" ? 1 : -1));
  const page = paged(pulls, call.url);
  const tips = await tipsOf(repo, page.items);
  return json(page.items.map((p) => shape.pullRequest(call.view, repo, p, tips.get(p)!)), page.headers);
}

/** The comparison, or null when a branch is gone (GitHub's 404); other failures stand. */
function comparisonUnlessGone(repo: Repo, pull: Pull, tips: Tips): Promise<Comparison | null> {
  return comparisonOf(repo, pull, tips).catch((err: unknown) => (err instanceof GitHubError && err.status === 404 ? null : Promise.reject(err)));
}

async function getPull(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const format = mediaFormat(call.accept);
  const tips = await tipsOfOne(repo, pull);
  if (format === "diff") {
    const { diff } = await comparisonOf(repo, pull, tips);
    return { status: 200, text: diff, contentType: "application/vnd.github.diff; charset=utf-8", headers: { "x-github-media-type": "github.v3; format=diff" } };
  }
  // The pull request itself outlives its branches; only its size is unknown without them.
  return json(shape.fullPullRequest(call.view, repo, pull, tips, await comparisonUnlessGone(repo, pull, tips)));
}

async function getFiles(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const tips = await tipsOfOne(repo, pull);
  const { files } = await comparisonOf(repo, pull, tips);
  return list(call, files, (f) => shape.pullFile(call.view, repo, tips, f));
}

function getComments(call: Call): Answer {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  return list(call, pull.comments, (c) => shape.issueComment(call.view, repo, pull, c));
}

function postComment(call: Call): Answer {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const { body } = bodyObject(call);
  if (typeof body !== "string" || body.trim() === "") throw validationFailed({ resource: "IssueComment", field: "body", code: body === undefined ? "missing_field" : "invalid" });
  const at = touch(pull);
  const comment = { id: call.view.store.nextId(), user: call.grant.login, body, createdAt: at, updatedAt: at };
  pull.comments.push(comment);
  return json(shape.issueComment(call.view, repo, pull, comment), undefined, 201);
}

async function getReviewComments(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const tips = await tipsOfOne(repo, pull);
  // The hunks come from the diff, which is only worth computing when there are comments to place.
  const comparison = pull.reviewComments.length ? await comparisonUnlessGone(repo, pull, tips) : null;
  return list(call, pull.reviewComments, (c) => shape.reviewComment(call.view, repo, pull, tips, c, placeOf(comparison, c)));
}

async function getReviews(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const tips = await tipsOfOne(repo, pull);
  return list(call, pull.reviews, (r) => shape.review(call.view, repo, pull, tips, r));
}

const REVIEW_DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request";
const SIDES: readonly string[] = ["RIGHT", "LEFT"];

interface Inline {
  path: string;
  body: string;
  line: number;
  side: Side;
  startLine: number | null;
  startSide: Side | null;
}

const isLine = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0;

/** One inline comment as GitHub takes it (`position`, the legacy way, is not served); null when malformed. */
function inlineOf(c: unknown): Inline | null {
  if (typeof c !== "object" || c === null) return null;
  const { path, body, line, side = "RIGHT", start_line: startLine, start_side: startSide } = c as Record<string, unknown>;
  if (typeof path !== "string" || path === "" || typeof body !== "string" || !isLine(line) || typeof side !== "string" || !SIDES.includes(side)) return null;
  if (startLine !== undefined && startLine !== null && !isLine(startLine)) return null;
  if (startSide !== undefined && startSide !== null && (typeof startSide !== "string" || !SIDES.includes(startSide))) return null;
  const multi = isLine(startLine);
  return { path, body, line, side: side as Side, startLine: multi ? startLine : null, startSide: multi ? ((startSide as Side | null | undefined) ?? (side as Side)) : null };
}

/**
 * Whether the diff holds the comment, as GitHub checks it: a path the pull request does not
 * change cannot be resolved; a line outside every hunk on its side is not part of the diff;
 * a multi-line comment starts before its last line, inside the same hunk. GitHub refuses
 * the whole review for any one of them, saying which rule, not which comment.
 */
function misplaced(comparison: Comparison, c: Inline): string | null {
  const file = comparison.files.find((f) => f.filename === c.path);
  if (!file) return "Path could not be resolved";
  const end = placeInPatch(file.patch, c.line, c.side);
  if (!end) return "Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank";
  if (c.startLine === null) return null;
  if (c.startSide === c.side && c.startLine >= c.line) return "Pull request review thread start line must precede the end line.";
  const start = placeInPatch(file.patch, c.startLine, c.startSide!);
  if (!start || start.hunk !== end.hunk) return "Pull request review thread start line must be part of the same hunk as the line.";
  return null;
}

/** The diff a review at `commitId` is placed on: the pull request's at that commit, as GitHub places it. */
async function diffAt(repo: Repo, pull: Pull, tips: Tips, commitId: string | undefined): Promise<Comparison> {
  if (commitId === undefined || commitId === tips.head) return comparisonOf(repo, pull, tips);
  const sha = await commitOf(repo, commitId);
  if (sha === null) throw validationFailed({ resource: "PullRequestReview", field: "commit_id", code: "invalid", message: `No commit found for SHA: ${commitId}` });
  return comparisonOf(repo, pull, { ...tips, head: sha });
}

async function postReview(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const { event, body = "", commit_id: commitId, comments = [] } = bodyObject(call);
  const problems: FieldError[] = [];
  const state = typeof event === "string" && Object.hasOwn(REVIEW_EVENTS, event) ? REVIEW_EVENTS[event]! : null;
  if (state === null) problems.push({ resource: "PullRequestReview", field: "event", code: event === undefined ? "missing_field" : "invalid" });
  if (typeof body !== "string") problems.push({ resource: "PullRequestReview", field: "body", code: "invalid" });
  else if (state !== "APPROVED" && state !== null && body.trim() === "") problems.push({ resource: "PullRequestReview", field: "body", code: "missing_field", message: `Body is required for event ${event}` });
  if (commitId !== undefined && (typeof commitId !== "string" || !/^[0-9a-f]{40}$/i.test(commitId))) problems.push({ resource: "PullRequestReview", field: "commit_id", code: "invalid" });
  const inline = Array.isArray(comments) ? comments.map(inlineOf) : null;
  if (!inline || inline.some((c) => c === null)) problems.push({ resource: "PullRequestReview", field: "comments", code: "invalid", message: "each comment needs a path, a body, a line and at most a side (RIGHT or LEFT), a start_line and a start_side" });
  if (problems.length) throw validationFailed(...problems);
  if (pull.user.toLowerCase() === call.grant.login.toLowerCase() && state !== "COMMENTED")
    throw unprocessable(state === "APPROVED" ? "Can not approve your own pull request" : "Can not request changes on your own pull request");
  const tips = await tipsOfOne(repo, pull);
  const at = (commitId as string | undefined)?.toLowerCase();
  if (inline!.length) {
    const comparison = await diffAt(repo, pull, tips, at);
    const refusals = [...new Set(inline!.map((c) => misplaced(comparison, c!)).filter((r) => r !== null))];
    if (refusals.length) throw new GitHubError(422, "Unprocessable Entity", { errors: refusals }, {}, REVIEW_DOCS);
  }
  const now = touch(pull);
  const review = { id: call.view.store.nextId(), user: call.grant.login, state: state!, body: body as string, submittedAt: now, commitId: at ?? tips.head };
  pull.reviews.push(review);
  for (const c of inline!)
    pull.reviewComments.push({ ...c!, id: call.view.store.nextId(), user: call.grant.login, createdAt: now, updatedAt: now, reviewId: review.id, commitId: review.commitId, inReplyTo: null });
  return json(shape.review(call.view, repo, pull, tips, review));
}

/**
 * `POST …/pulls/{n}/comments`: a reply (`in_reply_to`), which joins the thread of the
 * comment it answers, or a new single comment at `commit_id`, placed as a review's are.
 */
async function postReviewComment(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const given = bodyObject(call);
  const tips = await tipsOfOne(repo, pull);
  const now = iso(Date.now());
  const base = { id: 0, user: call.grant.login, createdAt: now, updatedAt: now, reviewId: null, commitId: null as string | null };
  let comment: ReviewComment;
  if (given.in_reply_to !== undefined) {
    if (typeof given.body !== "string" || given.body.trim() === "") throw validationFailed({ resource: "PullRequestReviewComment", field: "body", code: given.body === undefined ? "missing_field" : "invalid" });
    const to = pull.reviewComments.find((c) => c.id === given.in_reply_to);
    if (!to) throw notFound();
    const root = to.inReplyTo === null ? to : pull.reviewComments.find((c) => c.id === to.inReplyTo)!;
    comment = { ...base, body: given.body, path: root.path, line: root.line, side: root.side, startLine: root.startLine, startSide: root.startSide, commitId: root.commitId, inReplyTo: root.id };
  } else {
    const c = inlineOf(given);
    const commitId = given.commit_id;
    if (typeof commitId !== "string" || !/^[0-9a-f]{40}$/i.test(commitId)) throw validationFailed({ resource: "PullRequestReviewComment", field: "commit_id", code: commitId === undefined ? "missing_field" : "invalid" });
    if (!c) throw validationFailed({ resource: "PullRequestReviewComment", field: "line", code: "invalid", message: "a comment needs a path, a body, a line and at most a side, a start_line and a start_side" });
    const refusal = misplaced(await diffAt(repo, pull, tips, commitId.toLowerCase()), c);
    if (refusal) throw new GitHubError(422, "Unprocessable Entity", { errors: [refusal] }, {}, "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request");
    comment = { ...base, ...c, commitId: commitId.toLowerCase(), inReplyTo: null };
  }
  comment.id = call.view.store.nextId();
  touch(pull);
  pull.reviewComments.push(comment);
  const comparison = await comparisonUnlessGone(repo, pull, tips);
  return json(shape.reviewComment(call.view, repo, pull, tips, comment, placeOf(comparison, comment)), undefined, 201);
}

const CHECK_STATUSES = ["queued", "in_progress", "completed"] as const;
const CONCLUSIONS = ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"];

/** The pull requests whose head is at `sha` now: a check run names them. */
async function pullsAt(repo: Repo, sha: string): Promise<{ pull: Pull; tips: Tips }[]> {
  const pulls = [...repo.pulls.values()].filter((p) => p.state === "open");
  const tips = await tipsOf(repo, pulls);
  return pulls.filter((p) => tips.get(p)!.head === sha).map((pull) => ({ pull, tips: tips.get(pull)! }));
}

async function getCheckRuns(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const ref = call.params.ref!;
  const sha = await commitOf(repo, ref);
  if (sha === null) throw new GitHubError(422, `No commit found for SHA: ${ref}`);
  const name = call.url.searchParams.get("check_name");
  const status = choice(call, "CheckRun", "status", CHECK_STATUSES, null);
  const filter = choice(call, "CheckRun", "filter", ["latest", "all"] as const, "latest");
  const all = repo.checks.filter((c) => c.headSha === sha).sort((a, b) => a.id - b.id);
  // GitHub's default answers only the newest run of each name: a rerun replaces the run before it.
  const newest = filter === "all" ? all : all.filter((c) => !all.some((d) => d.name === c.name && d.id > c.id));
  const runs = newest.filter((c) => (name === null || c.name === name) && (status === null || c.status === status));
  const page = paged(runs, call.url);
  const pulls = await pullsAt(repo, sha);
  return json({ total_count: runs.length, check_runs: page.items.map((c) => shape.checkRun(call.view, repo, c, pulls)) }, page.headers);
}

/** A timestamp GitHub takes: ISO 8601. */
const isTime = (v: unknown): v is string => typeof v === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v));

async function postCheckRun(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const given = bodyObject(call);
  const { name, head_sha: headSha, details_url: detailsUrl, started_at: startedAt, completed_at: completedAt } = given;
  // A conclusion completes the run, as GitHub's docs say.
  const status = given.conclusion !== undefined && given.status === undefined ? "completed" : (given.status ?? "queued");
  const conclusion = given.conclusion ?? null;
  const problems: FieldError[] = [];
  if (typeof name !== "string" || name.trim() === "") problems.push({ resource: "CheckRun", field: "name", code: name === undefined ? "missing_field" : "invalid" });
  if (typeof headSha !== "string" || !/^[0-9a-f]{40}$/i.test(headSha)) problems.push({ resource: "CheckRun", field: "head_sha", code: headSha === undefined ? "missing_field" : "invalid" });
  if (typeof status !== "string" || !(CHECK_STATUSES as readonly string[]).includes(status)) problems.push({ resource: "CheckRun", field: "status", code: "invalid" });
  if (conclusion !== null && (typeof conclusion !== "string" || !CONCLUSIONS.includes(conclusion))) problems.push({ resource: "CheckRun", field: "conclusion", code: "invalid" });
  else if (status === "completed" && conclusion === null) problems.push({ resource: "CheckRun", field: "conclusion", code: "missing_field", message: "conclusion is required when status is completed" });
  else if (status !== "completed" && conclusion !== null) problems.push({ resource: "CheckRun", field: "conclusion", code: "invalid", message: "a conclusion completes the run: status must be completed" });
  if (detailsUrl !== undefined && (typeof detailsUrl !== "string" || !URL.canParse(detailsUrl))) problems.push({ resource: "CheckRun", field: "details_url", code: "invalid" });
  for (const [field, value] of [["started_at", startedAt], ["completed_at", completedAt]] as const)
    if (value !== undefined && !isTime(value)) problems.push({ resource: "CheckRun", field, code: "invalid" });
  if (problems.length) throw validationFailed(...problems);
  const sha = await commitOf(repo, (headSha as string).toLowerCase());
  if (sha === null) throw new GitHubError(422, `No commit found for SHA: ${headSha as string}`);
  const now = iso(Date.now());
  const run: CheckRun = {
    id: call.view.store.nextId(),
    headSha: sha,
    name: name as string,
    status: status as CheckRun["status"],
    conclusion: conclusion as string | null,
    detailsUrl: (detailsUrl as string | undefined) ?? null,
    startedAt: startedAt === undefined ? now : iso(startedAt as string),
    completedAt: status === "completed" ? (completedAt === undefined ? now : iso(completedAt as string)) : null,
  };
  repo.checks.push(run);
  return json(shape.checkRun(call.view, repo, run, await pullsAt(repo, sha)), undefined, 201);
}

async function getProtection(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const branch = call.params.branch!;
  if (!(await branchExists(repo, branch))) throw notFound("Branch not found");
  if (!Object.hasOwn(repo.protection, branch)) throw notFound("Branch not protected");
  // GitHub shows a branch's protection to those who may administer the repository: a fine-grained token needs `administration=read`, which a read token here lacks.
  if (call.grant.access !== "write") throw notAccessible("administration=read", "https://docs.github.com/rest/branches/branch-protection#get-branch-protection");
  return json(shape.protection(call.view, repo, branch, repo.protection[branch]!));
}

function getLabels(call: Call): Answer {
  const repo = repoOf(call);
  return list(call, repo.labels, (l) => shape.label(call.view, repo, l));
}

function postLabel(call: Call): Answer {
  const repo = repoOf(call);
  const { name, color = "ededed", description = "" } = bodyObject(call);
  const problems: FieldError[] = [];
  if (typeof name !== "string" || name.trim() === "") problems.push({ resource: "Label", field: "name", code: name === undefined ? "missing_field" : "invalid" });
  else if (call.view.store.labelNamed(repo, name)) problems.push({ resource: "Label", field: "name", code: "already_exists" });
  if (typeof color !== "string" || !/^#?[0-9a-f]{6}$/i.test(color)) problems.push({ resource: "Label", field: "color", code: "invalid" });
  if (typeof description !== "string" || description.length > 100) problems.push({ resource: "Label", field: "description", code: "invalid" });
  if (problems.length) throw validationFailed(...problems);
  const label = call.view.store.addLabel(repo, name as string, (color as string).replace(/^#/, "").toLowerCase(), description as string);
  return json(shape.label(call.view, repo, label), undefined, 201);
}

function getIssueLabels(call: Call): Answer {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  return list(call, pull.labels, (l) => shape.label(call.view, repo, l));
}

function postIssueLabels(call: Call): Answer {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const body = call.json();
  // GitHub takes `{labels: [...]}` or the bare array, of names or `{name}` objects.
  const given = Array.isArray(body) ? body : typeof body === "object" && body !== null ? (body as Record<string, unknown>).labels : undefined;
  const names = Array.isArray(given) ? given.map((l: unknown) => (typeof l === "object" && l !== null ? (l as { name?: unknown }).name : l)) : null;
  if (!names?.every((n): n is string => typeof n === "string" && n.trim() !== "")) throw validationFailed({ resource: "Label", field: "labels", code: given === undefined ? "missing_field" : "invalid" });
  let changed = false;
  for (const name of names) {
    // A name not in the repository yet becomes one of its labels, as GitHub does.
    const label = call.view.store.labelNamed(repo, name) ?? call.view.store.addLabel(repo, name);
    if (pull.labels.includes(label)) continue;
    pull.labels.push(label);
    changed = true;
  }
  if (changed) touch(pull);
  return json(pull.labels.map((l) => shape.label(call.view, repo, l)));
}

function getUser(call: Call): Answer {
  return json({ ...shape.user(call.view, call.grant.login), name: null, company: null, blog: "", location: null, email: null, bio: null, followers: 0, following: 0, created_at: iso(0), updated_at: iso(0) });
}

const at = (method: Route["method"], path: string, handle: Route["handle"]): Route => ({ method, path: path.split("/").slice(1), handle });

const ROUTES: Route[] = [
  at("GET", "/user", getUser),
  at("GET", "/repos/:owner/:repo", (call) => json(shape.repository(call.view, repoOf(call)))),
  at("GET", "/repos/:owner/:repo/pulls", getPulls),
  at("GET", "/repos/:owner/:repo/pulls/:number", getPull),
  at("GET", "/repos/:owner/:repo/pulls/:number/files", getFiles),
  at("GET", "/repos/:owner/:repo/pulls/:number/comments", getReviewComments),
  at("GET", "/repos/:owner/:repo/pulls/:number/reviews", getReviews),
  at("POST", "/repos/:owner/:repo/pulls/:number/reviews", writes("pull_requests=write", "pulls/reviews#create-a-review-for-a-pull-request", postReview)),
  at("POST", "/repos/:owner/:repo/pulls/:number/comments", writes("pull_requests=write", "pulls/comments#create-a-review-comment-for-a-pull-request", postReviewComment)),
  at("GET", "/repos/:owner/:repo/issues/:number/comments", getComments),
  at("POST", "/repos/:owner/:repo/issues/:number/comments", writes(ISSUE_WRITE, "issues/comments#create-an-issue-comment", postComment)),
  at("GET", "/repos/:owner/:repo/issues/:number/labels", getIssueLabels),
  at("POST", "/repos/:owner/:repo/issues/:number/labels", writes(ISSUE_WRITE, "issues/labels#add-labels-to-an-issue", postIssueLabels)),
  at("GET", "/repos/:owner/:repo/labels", getLabels),
  at("POST", "/repos/:owner/:repo/labels", writes(ISSUE_WRITE, "issues/labels#create-a-label", postLabel)),
  at("GET", "/repos/:owner/:repo/commits/:ref/check-runs", getCheckRuns),
  at("POST", "/repos/:owner/:repo/check-runs", writes("checks=write", "checks/runs#create-a-check-run", postCheckRun)),
  at("POST", "/graphql", (call) => answerGraphql(call.view, call.grant, call.json())),
  at("GET", "/repos/:owner/:repo/branches/:branch/protection", getProtection),
];

/**
 * The route for `method` and the path's decoded segments, with its parameters. A parameter
 * is one segment: clients encode a `/` inside a branch name as `%2F`.
 */
export function route(method: string, segments: string[]): { handle: Route["handle"]; params: Record<string, string> } | null {
  next: for (const r of ROUTES) {
    if (r.method !== method || r.path.length !== segments.length) continue;
    const params: Record<string, string> = {};
    for (const [i, part] of r.path.entries()) {
      const segment = segments[i]!;
      if (part.startsWith(":") && segment !== "") params[part.slice(1)] = segment;
      else if (part !== segment) continue next;
    }
    return { handle: r.handle, params };
  }
  return null;
}
