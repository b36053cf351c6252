import { CODES } from "../../../src/api/errors.js";
import type { ChecksPage, CommentsPage, CommentsQuery, DiffFile, DiffPage, PageQuery, PullCheck, PullComment, PullParams, PullsPage, PullsQuery, PullSummary } from "../../../src/api/code-host.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { hunksOf, rangeOf } from "../../../src/rules/diff-hunks.js";
import { deadline, onHost, type HostClient } from "./clients.js";

/**
 * The `/github/...` reads (docs/code-host.md): GitHub's answers turned into the runtime's
 * shapes, a page at a time. A cursor is the host's page number and page size (prefixed,
 * for comments, by which of the three lists it is in), so a page is one page of the host's.
 */
const PER_PAGE = 30;

interface At {
  list: string;
  page: number;
  size: number;
}

/** Where a page starts: the cursor's list, page and size, or the first page at `limit`. */
function pageAt(q: { cursor?: string; limit?: number }): Outcome<At> {
  if (!q.cursor) return ok({ list: "c", page: 1, size: q.limit ?? PER_PAGE });
  const m = /^([crv]?)(\d+)\.(\d+)$/.exec(q.cursor);
  const at = m ? { list: m[1] || "c", page: Number(m[2]), size: Number(m[3]) } : null;
  if (!at || at.page < 1 || at.size < 1 || at.size > 100) return refuse(400, "cursor: a cursor is a nextCursor this route answered", CODES.invalidQuery);
  // The page number counts pages of the cursor's size: another size would start somewhere else.
  if (q.limit !== undefined && q.limit !== at.size) return refuse(400, `limit: this cursor pages by ${at.size}; leave limit out, or give ${at.size}`, CODES.invalidQuery);
  return ok(at);
}

const cursorAfter = (at: At, list = "") => `${list}${at.page + 1}.${at.size}`;

/** GitHub JSON as the client hands it: the list and single shapes differ in types, not in the fields read here. */
type Gh = Record<string, any>;

const hasNext = (headers: { link?: string }) => /rel="next"/.test(headers.link ?? "");

export function summaryOf(p: Gh): PullSummary {
  return {
    number: p.number,
    title: p.title ?? "",
    body: p.body ?? "",
    author: p.user?.login ?? "ghost",
    state: p.merged_at ? "merged" : p.state === "closed" ? "closed" : "open",
    draft: p.draft === true,
    head: { ref: p.head?.ref ?? "", sha: p.head?.sha ?? "" },
    base: { ref: p.base?.ref ?? "", sha: p.base?.sha ?? "" },
    labels: (p.labels ?? []).map((l: Gh) => (typeof l === "string" ? l : l.name)),
    createdAt: p.created_at,
    updatedAt: p.updated_at ?? p.created_at,
    url: p.html_url ?? "",
  };
}

export function fileOf(f: Gh): DiffFile {
  const patch = typeof f.patch === "string" ? f.patch : null;
  return {
    path: f.filename,
    previousPath: f.previous_filename ?? null,
    status: f.status,
    additions: f.additions ?? 0,
    deletions: f.deletions ?? 0,
    patch,
    hunks: patch ? hunksOf(patch).map(rangeOf) : [],
  };
}

const pullName = (p: PullParams) => `pull request ${p.owner}/${p.repo}#${p.number}`;

/** One pull request, in the runtime's shape: what a diff, a comments walk and the checks start from. */
export async function pullOf(client: HostClient, p: PullParams): Promise<Outcome<PullSummary>> {
  const got = await onHost(client, pullName(p), (o) => o.rest.pulls.get({ owner: p.owner, repo: p.repo, pull_number: p.number, ...deadline() }));
  return got.ok ? ok(summaryOf(got.value.data)) : got;
}

export async function listPulls(client: HostClient, repo: { owner: string; repo: string }, q: PullsQuery): Promise<Outcome<PullsPage>> {
  const at = pageAt(q);
  if (!at.ok) return at;
  const got = await onHost(client, `repository ${repo.owner}/${repo.repo}`, (o) =>
    o.rest.pulls.list({ ...repo, state: q.state ?? "open", sort: "created", direction: "desc", per_page: at.value.size, page: at.value.page, ...deadline() }),
  );
  if (!got.ok) return got;
  return ok({ repo: `${repo.owner}/${repo.repo}`, prs: (got.value.data as Gh[]).map(summaryOf), nextCursor: hasNext(got.value.headers) ? cursorAfter(at.value) : null });
}

export async function pullDiff(client: HostClient, p: PullParams, q: PageQuery): Promise<Outcome<DiffPage>> {
  const at = pageAt(q);
  if (!at.ok) return at;
  const pull = await pullOf(client, p);
  if (!pull.ok) return pull;
  const files = await onHost(client, pullName(p), (o) => o.rest.pulls.listFiles({ owner: p.owner, repo: p.repo, pull_number: p.number, per_page: at.value.size, page: at.value.page, ...deadline() }));
  if (!files.ok) return files;
  return ok({
    repo: `${p.owner}/${p.repo}`,
    number: p.number,
    head: pull.value.head,
    base: pull.value.base,
    files: (files.value.data as Gh[]).map(fileOf),
    nextCursor: hasNext(files.value.headers) ? cursorAfter(at.value) : null,
  });
}

/** The three lists a pull request's comments are in, in the order they are paged. */
const COMMENT_LISTS = ["c", "r", "v"] as const;

export async function pullComments(client: HostClient, p: PullParams, q: CommentsQuery): Promise<Outcome<CommentsPage>> {
  const start = pageAt(q);
  if (!start.ok) return start;
  const at = start.value;
  const list = at.list as (typeof COMMENT_LISTS)[number];
  const query = { owner: p.owner, repo: p.repo, per_page: at.size, page: at.page, ...deadline() };
  // GitHub answers the conversation of a number that is an issue, not a pull request; the pull request itself is checked first.
  if (list === "c" && at.page === 1) {
    const pull = await pullOf(client, p);
    if (!pull.ok) return pull;
  }
  const got = await onHost(client, pullName(p), async (o): Promise<{ data: Gh[]; headers: { link?: string } }> =>
    list === "c"
      ? o.rest.issues.listComments({ ...query, issue_number: p.number })
      : list === "r"
        ? o.rest.pulls.listReviewComments({ ...query, pull_number: p.number })
        : o.rest.pulls.listReviews({ ...query, pull_number: p.number }),
  );
  if (!got.ok) return got;
  const comments = got.value.data.map((c): PullComment => {
    const base = { id: c.id, author: c.user?.login ?? "ghost", body: c.body ?? "", url: c.html_url ?? "" };
    if (list === "c") return { ...base, kind: "comment", createdAt: c.created_at };
    if (list === "r") return { ...base, kind: "review-comment", createdAt: c.created_at, path: c.path, line: c.line ?? c.original_line ?? null };
    return { ...base, kind: "review", createdAt: c.submitted_at ?? "", state: c.state };
  });
  const next = COMMENT_LISTS[COMMENT_LISTS.indexOf(list) + 1];
  return ok({
    repo: `${p.owner}/${p.repo}`,
    number: p.number,
    comments,
    nextCursor: hasNext(got.value.headers) ? cursorAfter(at, list) : next ? `${next}1.${at.size}` : null,
  });
}

export async function pullChecks(client: HostClient, p: PullParams, q: PageQuery): Promise<Outcome<ChecksPage>> {
  const at = pageAt(q);
  if (!at.ok) return at;
  const pull = await pullOf(client, p);
  if (!pull.ok) return pull;
  const sha = pull.value.head.sha;
  const got = await onHost(client, pullName(p), (o) => o.rest.checks.listForRef({ owner: p.owner, repo: p.repo, ref: sha, per_page: at.value.size, page: at.value.page, ...deadline() }));
  if (!got.ok) return got;
  const checks = got.value.data.check_runs.map(
    (c): PullCheck => ({ name: c.name, status: c.status as PullCheck["status"], conclusion: c.conclusion ?? null, url: c.details_url ?? c.html_url ?? null, startedAt: c.started_at ?? null, completedAt: c.completed_at ?? null }),
  );
  const total = got.value.data.total_count;
  return ok({ repo: `${p.owner}/${p.repo}`, number: p.number, sha, total, checks, nextCursor: at.value.page * at.value.size < total ? cursorAfter(at.value) : null });
}
