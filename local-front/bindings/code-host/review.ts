import type { Octokit } from "@octokit/rest";
import type { PullParams } from "../../../src/api/code-host.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { FINDING_MARKER, findingMarker, type Capabilities, type PostedReview, type PostReview, type ReviewContext } from "../../../src/api/rooms.js";
import { anchorable } from "../../../src/rules/review-anchor.js";
import { deadline, hostRefusal, onHost, type HostClient, type HostClients } from "./clients.js";
import { pullOf } from "./reads.js";

/**
 * A pull request's review operations (docs/code-host.md, "Reviews"): what a reviewer is
 * given, and one review posted at the round's head, placed on the diff as the code host
 * places it, without repeating a finding already on an unresolved thread.
 */

/** GitHub JSON as the client hands it. */
type Gh = Record<string, any>;

/** Files read of one pull request: GitHub lists at most 3,000. */
const MAX_FILES = 3000;
/** The conversation, review comments and reviews given to a reviewer, together. */
const MAX_COMMENTS = 100;

const pullName = (p: PullParams) => `pull request ${p.owner}/${p.repo}#${p.number}`;

/** Clients whose review was refused 403 since the front started: they cannot post verdicts until a restart brings a new token. */
const refusedReviews = new WeakMap<HostClient, string>();

/** Every file of the pull request with its patch (null when the host gives none: binary, too large). */
async function filesOf(client: HostClient, p: PullParams): Promise<Outcome<ReviewContext["files"]>> {
  const got = await onHost(client, pullName(p), (o) =>
    o.paginate(o.rest.pulls.listFiles, { owner: p.owner, repo: p.repo, pull_number: p.number, per_page: 100, ...deadline() }, (res, done) => {
      if (res.data.length < 100) done();
      return res.data;
    }),
  );
  if (!got.ok) return got;
  return ok(
    (got.value as Gh[]).slice(0, MAX_FILES).map((f) => ({ path: f.filename, status: f.status, additions: f.additions ?? 0, deletions: f.deletions ?? 0, patch: typeof f.patch === "string" ? f.patch : null })),
  );
}

export async function reviewContext(client: HostClient, p: PullParams): Promise<Outcome<ReviewContext>> {
  const pull = await pullOf(client, p);
  if (!pull.ok) return pull;
  const query = { owner: p.owner, repo: p.repo, per_page: MAX_COMMENTS, ...deadline() };
  const [files, conversation, reviewComments, reviews] = await Promise.all([
    filesOf(client, p),
    onHost(client, pullName(p), (o) => o.rest.issues.listComments({ ...query, issue_number: p.number })),
    onHost(client, pullName(p), (o) => o.rest.pulls.listReviewComments({ ...query, pull_number: p.number })),
    onHost(client, pullName(p), (o) => o.rest.pulls.listReviews({ ...query, pull_number: p.number })),
  ]);
  for (const got of [files, conversation, reviewComments, reviews]) if (!got.ok) return got;
  const lists = [conversation, reviewComments, reviews] as { ok: true; value: { data: Gh[]; headers: { link?: string } } }[];
  const cut = lists.some((l) => /rel="next"/.test(l.value.headers.link ?? ""));
  const all = [
    ...lists[0]!.value.data.map((c) => ({ at: c.created_at as string, item: { kind: "comment", author: c.user?.login ?? "ghost", body: c.body ?? "" } })),
    ...lists[1]!.value.data.map((c) => ({ at: c.created_at as string, item: { kind: "review-comment", author: c.user?.login ?? "ghost", body: c.body ?? "", path: c.path, line: c.line ?? c.original_line ?? null } })),
    // A pending review is its author's draft, not yet said.
    ...lists[2]!.value.data.filter((r) => r.state !== "PENDING").map((r) => ({ at: (r.submitted_at ?? "") as string, item: { kind: "review", author: r.user?.login ?? "ghost", body: r.body ?? "", state: r.state } })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return ok({ pull: pull.value, files: (files as { ok: true; value: ReviewContext["files"] }).value, comments: all.slice(0, MAX_COMMENTS).map((c) => c.item), truncated: cut || all.length > MAX_COMMENTS });
}

const THREADS = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    reviewThreads(first: 100, after: $after) {
      nodes { isResolved comments(first: 100) { nodes { body author { login } } } }
      pageInfo { hasNextPage endCursor }
    } } } }`;

interface ThreadsPage {
  repository: { pullRequest: { reviewThreads: { nodes: { isResolved: boolean; comments: { nodes: { body: string; author: { login: string } | null }[] } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } };
}

/** A GraphQL call: GitHub answers 200 with `errors` for a query it refuses, which Octokit throws without an HTTP status. */
async function onGraphql<T>(client: HostClient, what: string, call: (o: Octokit) => Promise<T>): Promise<Outcome<T>> {
  try {
    return ok(await call(client.octokit));
  } catch (err) {
    const errors = (err as { errors?: { type?: string; message?: string }[] }).errors;
    if (!Array.isArray(errors)) return hostRefusal(err, client, what);
    const first = errors[0] ?? {};
    if (first.type === "NOT_FOUND") return refuse(404, `the code host has no ${what}, or does not show it to account ${client.account}`, CODES.codeHostNotFound);
    if (first.type === "FORBIDDEN") return refuse(503, `the code host does not let account ${client.account} read the review threads of ${what}: its token in accounts.json needs more access`, CODES.codeHostForbidden);
    return refuse(502, `the code host's GraphQL API refused the review threads query for ${what}: ${String(first.message ?? "no message").slice(0, 300)}`, CODES.codeHostFailed);
  }
}

/**
 * The fingerprints already posted by this account on the pull request's unresolved review
 * threads: a resolved thread has been dealt with, and anyone else's copy of a marker counts
 * for nothing, so a person quoting a finding does not hide it.
 */
async function openFingerprints(client: HostClient, p: PullParams, me: string): Promise<Outcome<Set<string>>> {
  const found = new Set<string>();
  const marker = new RegExp(FINDING_MARKER.source, "g");
  let after: string | null = null;
  for (;;) {
    const got: Outcome<ThreadsPage> = await onGraphql(client, pullName(p), (o) =>
      o.graphql<ThreadsPage>(THREADS, { owner: p.owner, name: p.repo, number: p.number, after, ...deadline() }),
    );
    if (!got.ok) return got;
    const threads = got.value.repository.pullRequest.reviewThreads;
    for (const t of threads.nodes)
      if (!t.isResolved)
        for (const c of t.comments.nodes) if (c.author?.login.toLowerCase() === me.toLowerCase()) for (const m of c.body.matchAll(marker)) found.add(m[1]!);
    if (!threads.pageInfo.hasNextPage) return ok(found);
    after = threads.pageInfo.endCursor;
  }
}

const EVENTS = { approve: "APPROVE", request_changes: "REQUEST_CHANGES", comment: "COMMENT" } as const;

type Finding = PostReview["findings"][number];

/** A finding's text in a review: nothing in it may pose as a marker, which would hide a later finding. */
const unmarked = (text: string) => text.replace(/<!--/g, "&lt;!--");

const inlineBody = (f: Finding) => `**${f.severity}**: ${unmarked(f.body)}\n\n${findingMarker(f.fingerprint)}`;

function reviewBody(req: PostReview, inBody: Finding[]): string {
  const parts = [unmarked(req.summary)];
  if (inBody.length)
    parts.push(
      ["Findings outside the diff:", "", ...inBody.map((f) => `- \`${f.path.replace(/`/g, "'")}:${f.line}\`${f.side === "LEFT" ? " (base)" : ""} **${f.severity}**: ${unmarked(f.body).replace(/\n+/g, " ")}`)].join("\n"),
    );
  parts.push(`<sub>${unmarked(req.source)}</sub>`);
  return parts.join("\n\n");
}

const OWN_PULL = /can not (approve|request changes on) your own pull request/i;

/** The reasons of the host's 422, joined; null for any other failure. */
function unprocessable(err: unknown): string | null {
  const e = err as { status?: number; response?: { data?: { message?: unknown; errors?: unknown } } };
  if (e?.status !== 422) return null;
  const errors = Array.isArray(e.response?.data?.errors) ? e.response.data.errors : [];
  return [String(e.response?.data?.message ?? ""), ...errors.map((x: unknown) => (typeof x === "string" ? x : JSON.stringify(x)))].join("; ");
}

export type PostedAnswer = Omit<PostedReview, "postedAt">;

/**
 * One review at `commitId`: refused `round-stale` when the pull request's head has moved;
 * findings the diff cannot anchor go in the body; findings already on an unresolved thread
 * of this account are skipped. Should the host still refuse the placement (it may know the
 * diff better than its patches say), the review is posted once more with every finding in
 * its body, so one bad line never loses the verdict.
 */
export async function postReview(client: HostClient, p: PullParams, req: PostReview): Promise<Outcome<PostedAnswer>> {
  const pull = await pullOf(client, p);
  if (!pull.ok) return pull;
  if (pull.value.head.sha !== req.commitId)
    return refuse(409, `${pullName(p)} has moved to ${pull.value.head.sha} since the round reviewed ${req.commitId}: start a new round`, CODES.roundStale, { head: pull.value.head.sha, roundHead: req.commitId });
  const me = await client.login();
  if (!me.ok) return me;
  const [files, posted] = await Promise.all([filesOf(client, p), openFingerprints(client, p, me.value)]);
  if (!files.ok) return files;
  if (!posted.ok) return posted;
  const seen = new Set(posted.value);
  const inline: Finding[] = [];
  const inBody: Finding[] = [];
  let skipped = 0;
  for (const f of req.findings) {
    // A finding twice in one verdict is posted once.
    if (seen.has(f.fingerprint)) {
      skipped++;
      continue;
    }
    seen.add(f.fingerprint);
    (anchorable(files.value, f).ok ? inline : inBody).push(f);
  }
  const post = async (comments: Finding[], body: Finding[]) => {
    try {
      const res = await client.octokit.rest.pulls.createReview({
        owner: p.owner,
        repo: p.repo,
        pull_number: p.number,
        commit_id: req.commitId,
        event: EVENTS[req.decision],
        body: reviewBody(req, body),
        comments: comments.map((f) => ({ path: f.path, line: f.line, side: f.side, body: inlineBody(f) })),
        ...deadline(),
      });
      return { ok: true as const, review: res.data };
    } catch (err) {
      return { ok: false as const, err };
    }
  };
  let result = await post(inline, inBody);
  let placed = inline.length;
  if (!result.ok && unprocessable(result.err)) {
    if (OWN_PULL.test(unprocessable(result.err)!))
      return refuse(
        409,
        `the code host does not let account ${client.account} (${me.value}) ${req.decision === "approve" ? "approve" : "request changes on"} ${pullName(p)}, which it opened: finalize a comment decision, or post with another account`,
        CODES.reviewOwnPullRequest,
      );
    if (inline.length) {
      result = await post([], [...inline, ...inBody]);
      placed = 0;
    }
  }
  if (!result.ok) {
    const refusal = hostRefusal(result.err, client, pullName(p));
    if (refusal.body.code === CODES.codeHostForbidden) refusedReviews.set(client, refusal.body.error);
    return refusal;
  }
  const review = result.review;
  return ok({ id: review.id, posted: placed, inBody: inline.length + inBody.length - placed, skipped, url: review.html_url ?? null, commitId: review.commit_id ?? req.commitId });
}

/**
 * Whether verdicts can be posted: some client's token works (its login answers) and no
 * review of it was refused 403 since the front started. The reason names the account,
 * never its token, and what to do.
 */
export async function capabilities(clients: HostClients): Promise<Capabilities> {
  const all = clients.all();
  if (all.length === 0)
    return { verdictPoster: { available: false, reason: "no code host is configured: add a code-host account (provider github) with a token that may write pull request reviews to accounts.json, or run the code-host simulator" } };
  const why = await Promise.all(
    all.map(async (c) => {
      const refused = refusedReviews.get(c);
      if (refused) return `account ${c.account} was refused a review since the front started (${refused}): give it a token that may write pull request reviews and restart the front`;
      const me = await c.login();
      return me.ok ? null : `account ${c.account} cannot sign in to the code host: ${me.body.error}`;
    }),
  );
  const reasons = why.filter((w): w is string => w !== null);
  if (reasons.length === all.length) return { verdictPoster: { available: false, reason: reasons.join("; ") } };
  return { verdictPoster: reasons.length ? { available: true, reason: `some accounts cannot post: ${reasons.join("; ")}` } : { available: true } };
}
