/**
 * The endpoints: each reads the state, checks its input as GitHub does, and answers in
 * GitHub's shape. The server has already authenticated the caller and counted the request.
 */
import { branchExists, commitOf, comparisonOf, tipsOf, tipsOfOne, type Tips } from "./commits.js";
import { GitHubError, notAccessible, notFound, unprocessable, unsupportedAccept, validationFailed, type FieldError } from "./errors.js";
import { paged } from "./pages.js";
import { hunkUpTo, type Comparison } from "./patch.js";
import * as shape from "./shapes.js";
import { iso, type Grant, type Pull, type Repo, type ReviewState } from "./store.js";

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
  const patchOf = (path: string) => comparison?.files.find((f) => f.filename === path)?.patch;
  return list(call, pull.reviewComments, (c) => shape.reviewComment(call.view, repo, pull, tips, c, hunkUpTo(patchOf(c.path), c.line)));
}

async function getReviews(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const pull = pullOf(call, repo);
  const tips = await tipsOfOne(repo, pull);
  return list(call, pull.reviews, (r) => shape.review(call.view, repo, pull, tips, r));
}

function isInlineComment(c: unknown): c is { path: string; body: string; line: number } {
  if (typeof c !== "object" || c === null) return false;
  const { path, body, line } = c as Record<string, unknown>;
  return typeof path === "string" && path !== "" && typeof body === "string" && typeof line === "number" && Number.isInteger(line) && line > 0;
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
  const inline = Array.isArray(comments) && comments.every(isInlineComment) ? comments : null;
  if (!inline) problems.push({ resource: "PullRequestReview", field: "comments", code: "invalid", message: "each comment needs a path, a body and a line" });
  if (problems.length) throw validationFailed(...problems);
  if (pull.user.toLowerCase() === call.grant.login.toLowerCase() && state !== "COMMENTED")
    throw unprocessable(state === "APPROVED" ? "Can not approve your own pull request" : "Can not request changes on your own pull request");
  const tips = await tipsOfOne(repo, pull);
  const at = touch(pull);
  const review = { id: call.view.store.nextId(), user: call.grant.login, state: state!, body: body as string, submittedAt: at, commitId: (commitId as string | undefined)?.toLowerCase() ?? tips.head };
  pull.reviews.push(review);
  for (const c of inline!)
    pull.reviewComments.push({ id: call.view.store.nextId(), user: call.grant.login, body: c.body, createdAt: at, updatedAt: at, path: c.path, line: c.line, reviewId: review.id, commitId: review.commitId });
  return json(shape.review(call.view, repo, pull, tips, review));
}

async function getCheckRuns(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const ref = call.params.ref!;
  const sha = await commitOf(repo, ref);
  if (sha === null) throw new GitHubError(422, `No commit found for SHA: ${ref}`);
  const name = call.url.searchParams.get("check_name");
  const status = choice(call, "CheckRun", "status", ["queued", "in_progress", "completed"] as const, null);
  const pulls = [...repo.pulls.values()];
  const tips = await tipsOf(repo, pulls);
  const runs = pulls
    .filter((p) => tips.get(p)!.head === sha)
    .flatMap((p) => p.checks.map((c) => ({ pull: p, check: c })))
    .filter(({ check }) => (name === null || check.name === name) && (status === null || check.status === status))
    .sort((a, b) => a.check.id - b.check.id);
  const page = paged(runs, call.url);
  return json({ total_count: runs.length, check_runs: page.items.map(({ pull, check }) => shape.checkRun(call.view, repo, pull, tips.get(pull)!, check)) }, page.headers);
}

async function getProtection(call: Call): Promise<Answer> {
  const repo = repoOf(call);
  const branch = call.params.branch!;
  if (!(await branchExists(repo, branch))) throw notFound("Branch not found");
  if (!Object.hasOwn(repo.protection, branch)) throw notFound("Branch not protected");
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
  at("GET", "/repos/:owner/:repo/issues/:number/comments", getComments),
  at("POST", "/repos/:owner/:repo/issues/:number/comments", writes(ISSUE_WRITE, "issues/comments#create-an-issue-comment", postComment)),
  at("GET", "/repos/:owner/:repo/issues/:number/labels", getIssueLabels),
  at("POST", "/repos/:owner/:repo/issues/:number/labels", writes(ISSUE_WRITE, "issues/labels#add-labels-to-an-issue", postIssueLabels)),
  at("GET", "/repos/:owner/:repo/labels", getLabels),
  at("POST", "/repos/:owner/:repo/labels", writes(ISSUE_WRITE, "issues/labels#create-a-label", postLabel)),
  at("GET", "/repos/:owner/:repo/commits/:ref/check-runs", getCheckRuns),
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
