import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-code-host-sim-"));
const checkout = join(work, "app");
let sim: CodeHostSimulator;

const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: checkout, stdio: "pipe" }).toString();
const write = (path: string, text: string) => (mkdirSync(join(checkout, path, ".."), { recursive: true }), writeFileSync(join(checkout, path), text));
const day = (n: number) => new Date(Date.UTC(2026, 0, n, 12)).toISOString();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const client = (auth: string) => new Octokit({ auth, baseUrl: sim.url, log: quiet });
/** The error a call fails with (Octokit's RequestError), for its status, message and headers. */
const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable("the call succeeded"), (err: { status: number; message: string; response?: { headers: Record<string, string>; data: any } }) => err);

const bob = () => client("t-bob");
const app = { owner: "acme", repo: "app" };

beforeAll(async () => {
  mkdirSync(checkout);
  git("init", "-q", "-b", "main");
  write("src/app.ts", "export const name = 'app';\nexport const port = 8080;\nexport const debug = false;\n");
  write("old.txt", "a file that moves\nwith a few lines\nso git sees the rename\n");
  write("gone.txt", "soon removed\n");
  write("README.md", "# App\n");
  git("add", "-A");
  git("commit", "-qm", "first");
  git("checkout", "-q", "-b", "feature");
  write("src/app.ts", "export const name = 'app';\nexport const port = 9090;\nexport const debug = false;\n");
  write("src/new.ts", "export const added = true;\n");
  git("rm", "-q", "gone.txt");
  mkdirSync(join(checkout, "docs"));
  git("mv", "old.txt", "docs/moved.txt");
  git("add", "-A");
  git("commit", "-qm", "feature");
  write("src/new.ts", "export const added = true;\nexport const twice = 2;\n");
  git("commit", "-qam", "feature again");
  // main moves on after the branch: the pull request's diff is from the merge base, not main's tip.
  git("checkout", "-q", "main");
  write("README.md", "# App\nMoved on.\n");
  git("commit", "-qam", "main moves");

  const many = Array.from({ length: 35 }, (_, i) => ({
    number: i + 1,
    title: `Change ${i + 1}`,
    user: "alice",
    head: `b${i + 1}`,
    base: "main",
    createdAt: day(i + 1),
    updatedAt: day(70 - i),
    state: i < 5 ? "merged" : i < 8 ? "closed" : "open",
    files: i === 8 ? [{ filename: "lib/x.py", patch: "@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3" }, { filename: "lib/y.py", status: "added", patch: "@@ -0,0 +1 @@\n+y = 1" }] : [],
  }));
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { "t-alice": { login: "alice" }, "t-bob": { login: "bob", owners: ["acme"] }, "t-rita": { login: "rita", owners: ["acme"], access: "read" } },
      repos: [
        {
          owner: "acme",
          name: "app",
          git: checkout,
          labels: [{ name: "bug", color: "d73a4a", description: "Something is wrong" }],
          protection: { main: { requiredChecks: ["ci"], requiredReviews: 2 } },
          pulls: [
            {
              number: 1,
              title: "Serve on 9090",
              body: "Moves the port.",
              user: "alice",
              head: "feature",
              base: "main",
              createdAt: day(3),
              labels: ["infra"],
              comments: [{ user: "carol", body: "Why 9090?", createdAt: day(4) }],
              reviewComments: [{ user: "carol", body: "Name the constant", path: "src/app.ts", line: 2 }],
              reviews: [{ user: "carol", state: "COMMENTED", body: "A nit." }],
              checks: [{ name: "ci" }, { name: "lint", status: "in_progress", conclusion: null }],
            },
            { number: 2, title: "Lost branch", user: "alice", head: "no-such-branch", base: "main", createdAt: day(5) },
          ],
        },
        { owner: "acme", name: "seeded", pulls: many },
        { owner: "other", name: "secret", private: true },
      ],
    }),
  });
});

afterAll(async () => {
  await sim?.close();
  removeDir(work);
});

describe("code-host simulator, driven by Octokit", () => {
  it("answers the authenticated user and the repository, with GitHub's headers", async () => {
    const me = await bob().rest.users.getAuthenticated();
    expect(me.data).toMatchObject({ login: "bob", id: expect.any(Number), type: "User" });
    expect(me.headers).toMatchObject({ "x-ratelimit-limit": "5000", "content-type": "application/json; charset=utf-8", "x-github-request-id": expect.any(String) });
    const repo = await bob().rest.repos.get(app);
    expect(repo.data).toMatchObject({ full_name: "acme/app", name: "app", private: false, default_branch: "main", owner: { login: "acme" }, url: `${sim.url}/repos/acme/app` });
    expect(Number(repo.headers["x-ratelimit-remaining"])).toBe(Number(me.headers["x-ratelimit-remaining"]) - 1);
    expect(Number(repo.headers["x-ratelimit-used"])).toBe(Number(me.headers["x-ratelimit-used"]) + 1);
    // Repository paths are case-insensitive, as on GitHub.
    expect((await bob().rest.repos.get({ owner: "ACME", repo: "App" })).data.id).toBe(repo.data.id);
  });

  it("pages pull requests through Link headers, newest first, with state filters", async () => {
    const octokit = bob();
    const all = await octokit.paginate(octokit.rest.pulls.list, { owner: "acme", repo: "seeded", state: "all", per_page: 10 });
    expect(all.map((p) => p.number)).toEqual(Array.from({ length: 35 }, (_, i) => 35 - i));
    const first = await octokit.rest.pulls.list({ owner: "acme", repo: "seeded", state: "all", per_page: 10 });
    expect(first.headers.link).toBe(
      `<${sim.url}/repos/acme/seeded/pulls?state=all&per_page=10&page=2>; rel="next", <${sim.url}/repos/acme/seeded/pulls?state=all&per_page=10&page=4>; rel="last"`,
    );
    const third = await octokit.rest.pulls.list({ owner: "acme", repo: "seeded", state: "all", per_page: 10, page: 3 });
    expect(third.headers.link).toMatch(/page=2>; rel="prev", <.*page=4>; rel="next", <.*page=4>; rel="last", <.*page=1>; rel="first"$/);
    const open = await octokit.paginate(octokit.rest.pulls.list, { owner: "acme", repo: "seeded", per_page: 100 });
    expect(open.map((p) => p.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 27 }, (_, i) => i + 9));
    const closed = (await octokit.rest.pulls.list({ owner: "acme", repo: "seeded", state: "closed" })).data;
    expect(closed.map((p) => [p.number, p.state, p.merged_at !== null])).toEqual([8, 7, 6, 5, 4, 3, 2, 1].map((n) => [n, "closed", n <= 5]));
    // Sorted by update, oldest first by default for that sort, as GitHub does.
    const updated = (await octokit.rest.pulls.list({ owner: "acme", repo: "seeded", state: "all", sort: "updated", per_page: 3 })).data;
    expect(updated.map((p) => p.number)).toEqual([35, 34, 33]);
    const bad = await failure(octokit.rest.pulls.list({ owner: "acme", repo: "seeded", state: "merged" as "all" }));
    expect(bad.status).toBe(422);
  });

  it("answers one pull request with its real branch tips and size", async () => {
    const { data: pr } = await bob().rest.pulls.get({ ...app, pull_number: 1 });
    const numstat = git("diff", "--numstat", "main...feature").trim().split("\n").map((l) => l.split("\t").map(Number));
    expect(pr).toMatchObject({
      number: 1,
      state: "open",
      merged_at: null,
      draft: false,
      title: "Serve on 9090",
      body: "Moves the port.",
      user: { login: "alice", type: "User" },
      head: { ref: "feature", sha: git("rev-parse", "feature").trim(), label: "acme:feature", repo: { full_name: "acme/app" } },
      base: { ref: "main", sha: git("rev-parse", "main").trim() },
      labels: [{ name: "infra", color: "ededed" }],
      additions: numstat.reduce((n, [a]) => n + a!, 0),
      deletions: numstat.reduce((n, [, d]) => n + d!, 0),
      changed_files: 4,
      commits: 2,
      mergeable: true,
      comments: 1,
      review_comments: 1,
      created_at: "2026-01-03T12:00:00Z",
    });
    // A pull request whose branch is gone still answers; its diff does not.
    expect((await bob().rest.pulls.get({ ...app, pull_number: 2 })).data).toMatchObject({ number: 2, changed_files: 0, head: { sha: expect.stringMatching(/^[0-9a-f]{40}$/) } });
  });

  it("serves the diff as git prints it for the three-dot range", async () => {
    const res = await bob().rest.pulls.get({ ...app, pull_number: 1, mediaType: { format: "diff" } });
    expect(res.headers["content-type"]).toBe("application/vnd.github.diff; charset=utf-8");
    expect(res.data as unknown as string).toBe(git("diff", "main...feature"));
    const seeded = await bob().rest.pulls.get({ owner: "acme", repo: "seeded", pull_number: 9, mediaType: { format: "diff" } });
    expect(seeded.data as unknown as string).toBe(
      "diff --git a/lib/x.py b/lib/x.py\n--- a/lib/x.py\n+++ b/lib/x.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n" +
        "diff --git a/lib/y.py b/lib/y.py\nnew file mode 100644\n--- /dev/null\n+++ b/lib/y.py\n@@ -0,0 +1 @@\n+y = 1\n",
    );
  });

  it("lists the files with status, patch and rename, from git or from the seed", async () => {
    const files = (await bob().rest.pulls.listFiles({ ...app, pull_number: 1 })).data;
    const byName = Object.fromEntries(files.map((f) => [f.filename, f]));
    expect(Object.keys(byName).sort()).toEqual(["docs/moved.txt", "gone.txt", "src/app.ts", "src/new.ts"]);
    expect(byName["src/app.ts"]).toMatchObject({ status: "modified", additions: 1, deletions: 1, changes: 2, sha: git("rev-parse", "feature:src/app.ts").trim() });
    expect(byName["src/app.ts"]!.patch).toBe("@@ -1,3 +1,3 @@\n export const name = 'app';\n-export const port = 8080;\n+export const port = 9090;\n export const debug = false;");
    expect(byName["src/new.ts"]).toMatchObject({ status: "added", additions: 2, deletions: 0 });
    expect(byName["gone.txt"]).toMatchObject({ status: "removed", additions: 0, deletions: 1, sha: git("rev-parse", "main:gone.txt").trim() });
    expect(byName["docs/moved.txt"]).toMatchObject({ status: "renamed", previous_filename: "old.txt", changes: 0 });
    expect(byName["docs/moved.txt"]!.patch).toBeUndefined();
    const paged = await bob().rest.pulls.listFiles({ ...app, pull_number: 1, per_page: 3, page: 2 });
    expect(paged.data.map((f) => f.filename)).toEqual([files[3]!.filename]);

    const seeded = (await bob().rest.pulls.listFiles({ owner: "acme", repo: "seeded", pull_number: 9 })).data;
    expect(seeded.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
      ["lib/x.py", "modified", 1, 1],
      ["lib/y.py", "added", 1, 0],
    ]);

    const lost = await failure(bob().rest.pulls.listFiles({ ...app, pull_number: 2 }));
    expect([lost.status, lost.response?.data.message]).toEqual([404, expect.stringContaining('"no-such-branch"')]);
    expect((await failure(bob().rest.pulls.get({ ...app, pull_number: 2, mediaType: { format: "diff" } }))).status).toBe(404);
  });

  it("creates comments as the token's user and lists them oldest first", async () => {
    const created = await bob().rest.issues.createComment({ ...app, issue_number: 1, body: "Looks good to me." });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ body: "Looks good to me.", user: { login: "bob" }, id: expect.any(Number) });
    const listed = (await bob().rest.issues.listComments({ ...app, issue_number: 1 })).data;
    expect(listed.map((c) => [c.user?.login, c.body])).toEqual([
      ["carol", "Why 9090?"],
      ["bob", "Looks good to me."],
    ]);
    const { data: pr } = await bob().rest.pulls.get({ ...app, pull_number: 1 });
    expect(pr.updated_at).toBe(created.data.created_at);
    const review = (await bob().rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data;
    expect(review).toMatchObject([{ path: "src/app.ts", line: 2, body: "Name the constant", diff_hunk: "@@ -1,3 +1,3 @@\n export const name = 'app';\n-export const port = 8080;\n+export const port = 9090;" }]);
    expect((await failure(bob().rest.issues.createComment({ ...app, issue_number: 1, body: undefined as unknown as string }))).status).toBe(422);
    expect((await failure(bob().rest.issues.createComment({ ...app, issue_number: 99, body: "x" }))).status).toBe(404);
  });

  it("adds labels, creating the repository's missing ones, idempotently", async () => {
    const added = await bob().rest.issues.addLabels({ ...app, issue_number: 1, labels: ["BUG", "needs-review"] });
    expect(added.data.map((l) => l.name)).toEqual(["infra", "bug", "needs-review"]);
    const again = await bob().rest.issues.addLabels({ ...app, issue_number: 1, labels: ["needs-review"] });
    expect(again.data.map((l) => l.id)).toEqual(added.data.map((l) => l.id));
    expect((await bob().rest.issues.listLabelsOnIssue({ ...app, issue_number: 1 })).data.map((l) => l.name)).toEqual(["infra", "bug", "needs-review"]);
    const repoLabels = (await bob().rest.issues.listLabelsForRepo(app)).data;
    expect(repoLabels.map((l) => [l.name, l.color])).toEqual([
      ["bug", "d73a4a"],
      ["infra", "ededed"],
      ["needs-review", "ededed"],
    ]);
    const made = await bob().rest.issues.createLabel({ ...app, name: "wontfix", color: "ffffff", description: "Not now" });
    expect([made.status, made.data]).toEqual([201, expect.objectContaining({ name: "wontfix", color: "ffffff", description: "Not now" })]);
    const dup = await failure(bob().rest.issues.createLabel({ ...app, name: "WontFix" }));
    expect([dup.status, dup.response?.data.errors]).toEqual([422, [{ resource: "Label", field: "name", code: "already_exists" }]]);
  });

  it("posts reviews, defaulting to the head commit, and refuses bad events", async () => {
    const head = git("rev-parse", "feature").trim();
    const approved = await bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "APPROVE" });
    expect([approved.status, approved.data]).toEqual([200, expect.objectContaining({ state: "APPROVED", commit_id: head, user: expect.objectContaining({ login: "bob" }) })]);
    const withComment = await bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "REQUEST_CHANGES", body: "Use a constant.", comments: [{ path: "src/app.ts", line: 2, body: "here" }] });
    expect(withComment.data.state).toBe("CHANGES_REQUESTED");
    const reviews = (await bob().rest.pulls.listReviews({ ...app, pull_number: 1 })).data;
    expect(reviews.map((r) => [r.user?.login, r.state])).toEqual([
      ["carol", "COMMENTED"],
      ["bob", "APPROVED"],
      ["bob", "CHANGES_REQUESTED"],
    ]);
    expect((await bob().rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data.map((c) => c.pull_request_review_id)).toEqual([null, withComment.data.id]);
    for (const bad of [{ event: "MERGE" }, {}, { event: "COMMENT" }, { event: "REQUEST_CHANGES", body: " " }]) {
      const err = await failure(bob().request("POST /repos/acme/app/pulls/1/reviews" as string, bad));
      expect([JSON.stringify(bad), err.status, err.response?.data.message]).toEqual([JSON.stringify(bad), 422, "Validation Failed"]);
    }
    // Nobody approves their own pull request.
    const own = await failure(client("t-alice").rest.pulls.createReview({ ...app, pull_number: 1, event: "APPROVE" }));
    expect([own.status, own.response?.data.errors]).toEqual([422, ["Can not approve your own pull request"]]);
  });

  it("lists the check runs of the head commit, by sha or branch", async () => {
    const head = git("rev-parse", "feature").trim();
    const runs = (await bob().rest.checks.listForRef({ ...app, ref: head })).data;
    expect(runs.total_count).toBe(2);
    expect(runs.check_runs.map((r) => [r.name, r.status, r.conclusion, r.head_sha, r.completed_at === null])).toEqual([
      ["ci", "completed", "success", head, false],
      ["lint", "in_progress", null, head, true],
    ]);
    expect((await bob().rest.checks.listForRef({ ...app, ref: "feature" })).data.total_count).toBe(2);
    expect((await bob().rest.checks.listForRef({ ...app, ref: "feature", check_name: "lint" })).data.check_runs.map((r) => r.name)).toEqual(["lint"]);
    expect((await bob().rest.checks.listForRef({ ...app, ref: "main" })).data).toEqual({ total_count: 0, check_runs: [] });
    expect((await failure(bob().rest.checks.listForRef({ ...app, ref: "nowhere" }))).status).toBe(422);
    const seeded = (await bob().rest.pulls.get({ owner: "acme", repo: "seeded", pull_number: 9 })).data;
    expect(seeded.head.sha).toMatch(/^[0-9a-f]{40}$/);
    expect((await bob().rest.checks.listForRef({ owner: "acme", repo: "seeded", ref: seeded.head.sha })).data.total_count).toBe(0);
  });

  it("answers branch protection, or that there is none", async () => {
    const { data } = await bob().rest.repos.getBranchProtection({ ...app, branch: "main" });
    expect(data).toMatchObject({ required_status_checks: { strict: false, contexts: ["ci"] }, required_pull_request_reviews: { required_approving_review_count: 2 } });
    const none = await failure(bob().rest.repos.getBranchProtection({ ...app, branch: "feature" }));
    expect([none.status, none.response?.data.message]).toEqual([404, "Branch not protected"]);
    const missing = await failure(bob().rest.repos.getBranchProtection({ ...app, branch: "constructor" }));
    expect([missing.status, missing.response?.data.message]).toEqual([404, "Branch not found"]);
  });

  it("lets a read-only token read, and refuses its writes as GitHub refuses a fine-grained token without the permission", async () => {
    const rita = client("t-rita");
    const comments = (await rita.rest.issues.listComments({ ...app, issue_number: 1 })).data;
    expect(comments.map((c) => c.body)).toContain("Why 9090?");
    expect((await rita.rest.pulls.list({ ...app, state: "all" })).data.map((p) => p.number).sort()).toEqual([1, 2]);
    expect((await rita.rest.pulls.listFiles({ ...app, pull_number: 1 })).data.length).toBeGreaterThan(0);
    expect((await rita.rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data.length).toBeGreaterThan(0);
    const issueLabels = (await rita.rest.issues.listLabelsOnIssue({ ...app, issue_number: 1 })).data.map((l) => l.name);
    const repoLabels = (await rita.rest.issues.listLabelsForRepo(app)).data.map((l) => l.name);

    const writes: [string, () => Promise<unknown>, string, string][] = [
      ["create comment", () => rita.rest.issues.createComment({ ...app, issue_number: 1, body: "from a reader" }), "issues/comments#create-an-issue-comment", "issues=write; pull_requests=write"],
      ["add labels", () => rita.rest.issues.addLabels({ ...app, issue_number: 1, labels: ["possible-duplicate"] }), "issues/labels#add-labels-to-an-issue", "issues=write; pull_requests=write"],
      ["create label", () => rita.rest.issues.createLabel({ ...app, name: "possible-duplicate" }), "issues/labels#create-a-label", "issues=write; pull_requests=write"],
      ["create review", () => rita.rest.pulls.createReview({ ...app, pull_number: 1, event: "COMMENT", body: "from a reader" }), "pulls/reviews#create-a-review-for-a-pull-request", "pull_requests=write"],
    ];
    for (const [what, write, docs, permissions] of writes) {
      const refused = await failure(write());
      expect([what, refused.status, refused.response?.data], what).toEqual([
        what,
        403,
        { message: "Resource not accessible by personal access token", documentation_url: `https://docs.github.com/rest/${docs}`, status: "403" },
      ]);
      expect(refused.response?.headers["x-accepted-github-permissions"], what).toBe(permissions);
    }
    // Nothing was written.
    expect((await rita.rest.issues.listComments({ ...app, issue_number: 1 })).data).toEqual(comments);
    expect((await rita.rest.issues.listLabelsOnIssue({ ...app, issue_number: 1 })).data.map((l) => l.name)).toEqual(issueLabels);
    expect((await rita.rest.issues.listLabelsForRepo(app)).data.map((l) => l.name)).toEqual(repoLabels);
    expect((await rita.rest.pulls.listReviews({ ...app, pull_number: 1 })).data.map((r) => r.body)).not.toContain("from a reader");
    // A repository the token cannot see stays missing, write or not.
    expect((await failure(rita.rest.issues.createComment({ owner: "other", repo: "secret", issue_number: 1, body: "x" }))).status).toBe(404);
  });

  it("refuses a bad token, hides unknown and ungranted repositories", async () => {
    const denied = await failure(client("ghp_wrong").rest.repos.get(app));
    expect([denied.status, denied.response?.data]).toEqual([401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" }]);
    expect((await failure(new Octokit({ baseUrl: sim.url, log: quiet }).rest.repos.get(app))).status).toBe(401);
    const unknown = await failure(bob().rest.repos.get({ owner: "acme", repo: "nope" }));
    expect([unknown.status, unknown.response?.data]).toEqual([404, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" }]);
    expect((await failure(bob().rest.repos.get({ owner: "other", repo: "secret" }))).status).toBe(404);
    expect((await failure(bob().rest.pulls.list({ owner: "other", repo: "secret" }))).status).toBe(404);
    expect((await client("t-alice").rest.repos.get({ owner: "other", repo: "secret" })).data).toMatchObject({ private: true, visibility: "private" });
    expect((await failure(bob().request("GET /repos/{owner}/{repo}/pulls/{n}", { ...app, n: "1e3" }))).status).toBe(404);
    expect((await failure(bob().request("GET /repos/acme/app/wikis"))).status).toBe(404);
  });

  it("refuses a rate-limited token until its time passes, then recovers", async () => {
    sim.addToken("t-limited", { login: "dora" });
    const until = Date.now() + 1500;
    sim.rateLimit("t-limited", until);
    const limited = await failure(client("t-limited").rest.repos.get(app));
    expect(limited.status).toBe(403);
    expect(limited.response?.headers).toMatchObject({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.ceil(until / 1000)) });
    // GitHub's primary limit says when it resets; only a secondary limit sends Retry-After.
    expect(limited.response?.headers["retry-after"]).toBeUndefined();
    expect(limited.response?.data.message).toMatch(/^API rate limit exceeded for user ID \d+\.$/);
    expect((await client("t-limited").rest.rateLimit.get()).data.resources.core.remaining).toBe(0);
    // Other tokens go on.
    expect((await bob().rest.repos.get(app)).status).toBe(200);
    await sleep(until - Date.now() + 50);
    const back = await client("t-limited").rest.repos.get(app);
    expect([back.status, back.headers["x-ratelimit-remaining"]]).toEqual([200, "4999"]);

    sim.rateLimit("*", Date.now() + 1300, "secondary");
    const secondary = await failure(bob().rest.repos.get(app));
    expect([secondary.status, secondary.response?.headers["retry-after"]]).toEqual([403, expect.stringMatching(/^[12]$/)]);
    expect(secondary.response?.data.message).toMatch(/secondary rate limit/);
    expect(secondary.response?.headers["x-ratelimit-remaining"]).not.toBe("0");
    sim.rateLimit("*", Date.now() + 300);
    expect((await failure(bob().rest.repos.get(app))).status).toBe(403);
    await sleep(350);
    expect((await bob().rest.repos.get(app)).status).toBe(200);
  });

  it("answers malformed and oversized bodies with GitHub's errors, and keeps serving", async () => {
    const bad = await failure(bob().request("POST /repos/acme/app/issues/1/comments" as string, { data: "{not json" }));
    expect([bad.status, bad.response?.data.message]).toEqual([400, "Problems parsing JSON"]);
    const notObject = await failure(bob().request("POST /repos/acme/app/labels" as string, { data: "[1]" }));
    expect(notObject.status).toBe(400);
    const big = await fetch(`${sim.url}/repos/acme/app/labels`, { method: "POST", headers: { authorization: "token t-bob" }, body: "x".repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    const badPath = await fetch(`${sim.url}/repos/acme/%E0%A4%A/pulls`, { headers: { authorization: "token t-bob" } });
    expect([badPath.status, badPath.headers.get("x-ratelimit-limit")]).toEqual([404, "5000"]);
    expect((await bob().rest.users.getAuthenticated()).data.login).toBe("bob");
  });

  it("refuses a seed whose checkout is not a git repository", async () => {
    const plain = mkdtempSync(join(tmpdir(), "agent-runtime-not-git-"));
    try {
      await expect(startCodeHostSimulator({ seed: Seed.parse({ repos: [{ owner: "x", name: "y", git: plain }] }) })).rejects.toThrow(/not a git repository/);
    } finally {
      removeDir(plain);
    }
  });
});
