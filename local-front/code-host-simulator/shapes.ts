/**
 * GitHub's JSON for each thing the simulator serves, with the fields Octokit's types name.
 * `url`s point back at the simulator (the origin the client called), so a client that
 * follows them stays on it; `html_url`s do too, under GitHub's web paths.
 */
import type { Comparison, DiffFile } from "./patch.js";
import type { Tips } from "./commits.js";
import type { Quota } from "./rate-limit.js";
import { sha1, type CheckRun, type Comment, type Label, type Pull, type Repo, type Review, type ReviewComment, type Store } from "./store.js";

export interface View {
  /** The origin the client called, e.g. http://127.0.0.1:41234 */
  api: string;
  store: Store;
}

/** GitHub's global ids look like `PR_kwDO…`: a kind, then an opaque token. */
export const nodeId = (kind: string, id: number) => `${kind}_${Buffer.from(`sim:${id}`).toString("base64url")}`;

const repoPath = (repo: Repo) => `${repo.owner}/${repo.name}`;

const association = (repo: Repo, login: string) => (login.toLowerCase() === repo.owner.toLowerCase() ? "OWNER" : "NONE");

export function user(v: View, login: string) {
  const id = v.store.userId(login);
  return {
    login,
    id,
    node_id: nodeId("U", id),
    avatar_url: `${v.api}/avatars/u/${id}`,
    gravatar_id: "",
    url: `${v.api}/users/${login}`,
    html_url: `${v.api}/${login}`,
    type: login.endsWith("[bot]") ? "Bot" : "User",
    site_admin: false,
  };
}

export function repository(v: View, repo: Repo) {
  const url = `${v.api}/repos/${repoPath(repo)}`;
  return {
    id: repo.id,
    node_id: nodeId("R", repo.id),
    name: repo.name,
    full_name: repoPath(repo),
    owner: user(v, repo.owner),
    private: repo.private,
    visibility: repo.private ? "private" : "public",
    html_url: `${v.api}/${repoPath(repo)}`,
    description: null,
    fork: false,
    url,
    pulls_url: `${url}/pulls{/number}`,
    issues_url: `${url}/issues{/number}`,
    labels_url: `${url}/labels{/name}`,
    branches_url: `${url}/branches{/branch}`,
    commits_url: `${url}/commits{/sha}`,
    // git's smart HTTP on the simulator itself (git-http.ts), as github.com serves it beside the API.
    clone_url: `${v.api}/${repoPath(repo)}.git`,
    git_url: `${v.api.replace(/^https?:/, "git:")}/${repoPath(repo)}.git`,
    ssh_url: `git@${new URL(v.api).hostname}:${repoPath(repo)}.git`,
    created_at: repo.createdAt,
    updated_at: repo.createdAt,
    pushed_at: repo.createdAt,
    default_branch: repo.defaultBranch,
    open_issues_count: [...repo.pulls.values()].filter((p) => p.state === "open").length,
    archived: false,
    disabled: false,
    has_issues: true,
    // Only tokens granted the owner reach a repository at all, and those may do anything in it.
    permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
  };
}

export function label(v: View, repo: Repo, l: Label) {
  return { id: l.id, node_id: nodeId("LA", l.id), url: `${v.api}/repos/${repoPath(repo)}/labels/${encodeURIComponent(l.name)}`, name: l.name, color: l.color, default: false, description: l.description };
}

function branchEnd(v: View, repo: Repo, ref: string, sha: string) {
  return { label: `${repo.owner}:${ref}`, ref, sha, user: user(v, repo.owner), repo: repository(v, repo) };
}

/** A pull request as the list answers it. */
export function pullRequest(v: View, repo: Repo, pull: Pull, tips: Tips) {
  const url = `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}`;
  const issueUrl = `${v.api}/repos/${repoPath(repo)}/issues/${pull.number}`;
  const html = `${v.api}/${repoPath(repo)}/pull/${pull.number}`;
  const closedAt = pull.state === "open" ? null : pull.updatedAt;
  return {
    url,
    id: pull.id,
    node_id: nodeId("PR", pull.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issueUrl,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${v.api}/repos/${repoPath(repo)}/pulls/comments{/number}`,
    comments_url: `${issueUrl}/comments`,
    statuses_url: `${v.api}/repos/${repoPath(repo)}/statuses/${tips.head}`,
    number: pull.number,
    state: pull.state === "open" ? "open" : "closed",
    locked: false,
    title: pull.title,
    user: user(v, pull.user),
    body: pull.body,
    labels: pull.labels.map((l) => label(v, repo, l)),
    milestone: null,
    active_lock_reason: null,
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: closedAt,
    merged_at: pull.state === "merged" ? closedAt : null,
    merge_commit_sha: pull.state === "merged" ? sha1(`merge:${tips.base}:${tips.head}`) : null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: branchEnd(v, repo, pull.head, tips.head),
    base: branchEnd(v, repo, pull.base, tips.base),
    _links: {
      self: { href: url },
      html: { href: html },
      issue: { href: issueUrl },
      comments: { href: `${issueUrl}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${v.api}/repos/${repoPath(repo)}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: `${v.api}/repos/${repoPath(repo)}/statuses/${tips.head}` },
    },
    author_association: association(repo, pull.user),
    auto_merge: null,
    draft: pull.draft,
  };
}

/** A pull request as `GET …/pulls/{number}` answers it: the list's fields and the change's size. `comparison` null: the branches are gone. */
export function fullPullRequest(v: View, repo: Repo, pull: Pull, tips: Tips, comparison: Comparison | null) {
  const files = comparison?.files ?? [];
  return {
    ...pullRequest(v, repo, pull, tips),
    merged: pull.state === "merged",
    mergeable: pull.state === "open" && comparison ? true : null,
    rebaseable: pull.state === "open" && comparison ? true : null,
    mergeable_state: pull.state !== "open" || !comparison ? "unknown" : pull.draft ? "draft" : "clean",
    merged_by: null,
    comments: pull.comments.length,
    review_comments: pull.reviewComments.length,
    maintainer_can_modify: false,
    commits: comparison?.commits ?? 0,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    changed_files: files.length,
  };
}

export function pullFile(v: View, repo: Repo, tips: Tips, f: DiffFile) {
  const path = f.filename.split("/").map(encodeURIComponent).join("/");
  return {
    sha: f.sha,
    filename: f.filename,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${v.api}/${repoPath(repo)}/blob/${tips.head}/${path}`,
    raw_url: `${v.api}/${repoPath(repo)}/raw/${tips.head}/${path}`,
    contents_url: `${v.api}/repos/${repoPath(repo)}/contents/${path}?ref=${tips.head}`,
    ...(f.patch === undefined ? {} : { patch: f.patch }),
    ...(f.previousFilename ? { previous_filename: f.previousFilename } : {}),
  };
}

export function issueComment(v: View, repo: Repo, pull: Pull, c: Comment) {
  return {
    id: c.id,
    node_id: nodeId("IC", c.id),
    url: `${v.api}/repos/${repoPath(repo)}/issues/comments/${c.id}`,
    html_url: `${v.api}/${repoPath(repo)}/pull/${pull.number}#issuecomment-${c.id}`,
    issue_url: `${v.api}/repos/${repoPath(repo)}/issues/${pull.number}`,
    body: c.body,
    user: user(v, c.user),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    author_association: association(repo, c.user),
  };
}

/** `diffHunk` null: the line is no longer in the diff (GitHub's outdated comment, whose `line` is null). */
export function reviewComment(v: View, repo: Repo, pull: Pull, tips: Tips, c: ReviewComment, diffHunk: string | null) {
  const commit = c.commitId ?? tips.head;
  return {
    id: c.id,
    node_id: nodeId("PRRC", c.id),
    url: `${v.api}/repos/${repoPath(repo)}/pulls/comments/${c.id}`,
    pull_request_review_id: c.reviewId,
    diff_hunk: diffHunk ?? "",
    path: c.path,
    commit_id: commit,
    original_commit_id: commit,
    user: user(v, c.user),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    html_url: `${v.api}/${repoPath(repo)}/pull/${pull.number}#discussion_r${c.id}`,
    pull_request_url: `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}`,
    author_association: association(repo, c.user),
    ...(c.inReplyTo === null ? {} : { in_reply_to_id: c.inReplyTo }),
    line: diffHunk === null ? null : c.line,
    original_line: c.line,
    side: c.side,
    start_line: diffHunk === null ? null : c.startLine,
    original_start_line: c.startLine,
    start_side: c.startSide,
    subject_type: "line",
    _links: {
      self: { href: `${v.api}/repos/${repoPath(repo)}/pulls/comments/${c.id}` },
      html: { href: `${v.api}/${repoPath(repo)}/pull/${pull.number}#discussion_r${c.id}` },
      pull_request: { href: `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}` },
    },
  };
}

export function review(v: View, repo: Repo, pull: Pull, tips: Tips, r: Review) {
  const html = `${v.api}/${repoPath(repo)}/pull/${pull.number}#pullrequestreview-${r.id}`;
  return {
    id: r.id,
    node_id: nodeId("PRR", r.id),
    user: user(v, r.user),
    body: r.body,
    state: r.state,
    html_url: html,
    pull_request_url: `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}`,
    author_association: association(repo, r.user),
    submitted_at: r.submittedAt,
    commit_id: r.commitId ?? tips.head,
    _links: { html: { href: html }, pull_request: { href: `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}` } },
  };
}

/** `pulls`: the repository's pull requests whose head is at the run's commit now, as GitHub lists them. */
export function checkRun(v: View, repo: Repo, c: CheckRun, pulls: { pull: Pull; tips: Tips }[]) {
  const url = `${v.api}/repos/${repoPath(repo)}/check-runs/${c.id}`;
  const html = `${v.api}/${repoPath(repo)}/runs/${c.id}`;
  return {
    id: c.id,
    node_id: nodeId("CR", c.id),
    head_sha: c.headSha,
    external_id: "",
    url,
    html_url: html,
    details_url: c.detailsUrl ?? html,
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.startedAt,
    completed_at: c.completedAt,
    output: { title: null, summary: null, text: null, annotations_count: 0, annotations_url: `${url}/annotations` },
    name: c.name,
    check_suite: { id: c.id },
    app: null,
    pull_requests: pulls.map(({ pull, tips }) => ({
      id: pull.id,
      number: pull.number,
      url: `${v.api}/repos/${repoPath(repo)}/pulls/${pull.number}`,
      head: { ref: pull.head, sha: tips.head, repo: { id: repo.id, name: repo.name, url: `${v.api}/repos/${repoPath(repo)}` } },
      base: { ref: pull.base, sha: tips.base, repo: { id: repo.id, name: repo.name, url: `${v.api}/repos/${repoPath(repo)}` } },
    })),
  };
}

export function protection(v: View, repo: Repo, branch: string, rules: Repo["protection"][string]) {
  const url = `${v.api}/repos/${repoPath(repo)}/branches/${encodeURIComponent(branch)}/protection`;
  const off = { enabled: false };
  return {
    url,
    required_status_checks: {
      url: `${url}/required_status_checks`,
      strict: false,
      contexts: rules.requiredChecks,
      contexts_url: `${url}/required_status_checks/contexts`,
      checks: rules.requiredChecks.map((context) => ({ context, app_id: null })),
    },
    required_pull_request_reviews: {
      url: `${url}/required_pull_request_reviews`,
      dismiss_stale_reviews: false,
      require_code_owner_reviews: false,
      require_last_push_approval: false,
      required_approving_review_count: rules.requiredReviews,
    },
    enforce_admins: { url: `${url}/enforce_admins`, enabled: false },
    required_linear_history: off,
    allow_force_pushes: off,
    allow_deletions: off,
    block_creations: off,
    required_conversation_resolution: off,
    lock_branch: off,
    allow_fork_syncing: off,
  };
}

export function rateLimit(core: Quota) {
  const other = (limit: number) => ({ limit, used: 0, remaining: limit, reset: core.reset });
  return { resources: { core, search: other(30), graphql: other(5000), integration_manifest: other(5000) }, rate: core };
}
