import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";
import { gitAt, gitRepo, writeFiles } from "../support/git-repo.js";

/** The code-host simulator as strict as GitHub for reviews: comments placed in the diff, check runs on a commit, review threads resolved over GraphQL. */
const work = mkdtempSync(join(tmpdir(), "agent-runtime-code-host-reviews-"));
const checkout = join(work, "app");
let sim: CodeHostSimulator;

const git = gitAt(checkout);
const write = (path: string, text: string) => writeFiles(checkout, { [path]: text });
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const client = (auth: string) => new Octokit({ auth, baseUrl: sim.url, log: quiet });
const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable("the call succeeded"), (err: { status: number; message: string; response?: { headers: Record<string, string>; data: any } }) => err);
const bob = () => client("t-bob");
const app = { owner: "acme", repo: "app" };
/** Thirty numbered lines; the pull request changes lines 3 and 25, so the diff has two hunks and lines 9 to 21 lie outside both. */
const lines = (changed: Record<number, string>) => Array.from({ length: 30 }, (_, i) => changed[i + 1] ?? `line ${i + 1}`).join("\n") + "\n";
const REVIEW_DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request";
const OUTSIDE = "Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank";

const THREADS = `query($owner: String!, $name: String!, $number: Int!, $first: Int, $after: String) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    reviewThreads(first: $first, after: $after) {
      nodes { id isResolved isOutdated path line comments(first: 10) { nodes { databaseId body author { login } path line } pageInfo { hasNextPage endCursor } } }
      pageInfo { hasNextPage endCursor } totalCount
    } } } }`;
type Threads = { repository: { pullRequest: { reviewThreads: { nodes: { id: string; isResolved: boolean; isOutdated: boolean; path: string; line: number | null; comments: { nodes: { databaseId: number; body: string; author: { login: string }; line: number | null }[] } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null }; totalCount: number } } } };
const threads = async (auth = "t-bob", first = 50) => (await client(auth).graphql<Threads>(THREADS, { owner: "acme", name: "app", number: 1, first })).repository.pullRequest.reviewThreads;

beforeAll(async () => {
  gitRepo(checkout, { "src/long.ts": lines({}), "src/other.ts": "untouched\n" }, [{ name: "feature", files: { "src/long.ts": lines({ 3: "line three", 25: "line twenty-five" }) } }]);
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { "t-alice": { login: "alice" }, "t-bob": { login: "bob", owners: ["acme"] }, "t-rita": { login: "rita", owners: ["acme"], access: "read" } },
      repos: [
        {
          owner: "acme",
          name: "app",
          git: checkout,
          pulls: [
            {
              number: 1,
              title: "Two changes",
              user: "alice",
              head: "feature",
              base: "main",
              createdAt: "2026-01-02T12:00:00Z",
              reviewComments: [
                { user: "carol", body: "open thread", path: "src/long.ts", line: 3 },
                { user: "carol", body: "settled thread", path: "src/long.ts", line: 25, resolved: true },
              ],
              checks: [{ name: "ci", conclusion: "failure" }, { name: "lint" }],
            },
          ],
        },
      ],
    }),
  });
});

afterAll(async () => {
  await sim?.close();
  removeDir(work);
});

describe("reviews placed in the diff, as GitHub places them", () => {
  it("refuses a whole review with a comment on a file the pull request does not change, and stores nothing", async () => {
    const before = (await bob().rest.pulls.listReviews({ ...app, pull_number: 1 })).data.length;
    const comments = [
      { path: "src/long.ts", line: 3, body: "fine on its own" },
      { path: "src/other.ts", line: 1, body: "not in the diff" },
    ];
    const refused = await failure(bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "COMMENT", body: "x", comments }));
    expect([refused.status, refused.response?.data]).toEqual([422, { message: "Unprocessable Entity", errors: ["Path could not be resolved"], documentation_url: REVIEW_DOCS, status: "422" }]);
    expect((await bob().rest.pulls.listReviews({ ...app, pull_number: 1 })).data.length).toBe(before);
    expect((await bob().rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data.map((c) => c.body)).toEqual(["open thread", "settled thread"]);
  });

  it("refuses a line outside every hunk on its side, and takes lines inside one on either side", async () => {
    for (const c of [
      { path: "src/long.ts", line: 12 },
      { path: "src/long.ts", line: 31 },
      // Line 9 of the base is no more in a hunk than line 9 of the head.
      { path: "src/long.ts", line: 9, side: "LEFT" as const },
    ]) {
      const refused = await failure(bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "COMMENT", body: "x", comments: [{ ...c, body: "b" }] }));
      expect([JSON.stringify(c), refused.status, refused.response?.data.errors]).toEqual([JSON.stringify(c), 422, [OUTSIDE]]);
    }
    const review = await bob().rest.pulls.createReview({
      ...app,
      pull_number: 1,
      event: "COMMENT",
      body: "inside",
      comments: [
        { path: "src/long.ts", line: 3, side: "LEFT", body: "the removed line" },
        { path: "src/long.ts", line: 6, body: "a context line" },
        { path: "src/long.ts", line: 25, start_line: 23, body: "three lines" },
      ],
    });
    expect(review.status).toBe(200);
    const mine = (await bob().rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data.filter((c) => c.pull_request_review_id === review.data.id);
    expect(mine.map((c) => [c.body, c.side, c.line, c.original_line, c.start_line, c.start_side, c.diff_hunk.split("\n").at(-1)])).toEqual([
      ["the removed line", "LEFT", 3, 3, null, null, "-line 3"],
      ["a context line", "RIGHT", 6, 6, null, null, " line 6"],
      ["three lines", "RIGHT", 25, 25, 23, "RIGHT", "+line twenty-five"],
    ]);
  });

  it("refuses a multi-line comment that does not start before its line, in the same hunk", async () => {
    const multi = async (start: number, line: number) =>
      failure(bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "COMMENT", body: "x", comments: [{ path: "src/long.ts", line, start_line: start, body: "b" }] }));
    expect((await multi(25, 25)).response?.data.errors).toEqual(["Pull request review thread start line must precede the end line."]);
    expect((await multi(3, 25)).response?.data.errors).toEqual(["Pull request review thread start line must be part of the same hunk as the line."]);
    const bad = await failure(bob().rest.pulls.createReview({ ...app, pull_number: 1, event: "COMMENT", body: "x", comments: [{ path: "src/long.ts", line: 3, side: "MIDDLE" as "LEFT", body: "b" }] }));
    expect([bad.status, bad.response?.data.message]).toEqual([422, "Validation Failed"]);
  });
});

describe("check runs belong to a commit", () => {
  it("keeps the seed's runs on the head at start; a push has none until one is created", async () => {
    const first = git("rev-parse", "feature").trim();
    const names = async (ref: string) => (await bob().rest.checks.listForRef({ ...app, ref })).data.check_runs.map((r) => [r.name, r.conclusion, r.head_sha === ref]);
    expect(await names(first)).toEqual([
      ["ci", "failure", true],
      ["lint", "success", true],
    ]);
    git("checkout", "-q", "feature");
    write("src/long.ts", lines({ 3: "line three", 25: "line twenty-five", 26: "line twenty-six" }));
    git("commit", "-qam", "a push");
    git("checkout", "-q", "main");
    const pushed = git("rev-parse", "feature").trim();
    expect((await bob().rest.pulls.get({ ...app, pull_number: 1 })).data.head.sha).toBe(pushed);
    expect(await names(pushed)).toEqual([]);
    expect((await bob().rest.checks.listForRef({ ...app, ref: "feature" })).data.total_count).toBe(0);
    // The old commit keeps its runs.
    expect((await bob().rest.checks.listForRef({ ...app, ref: first })).data.total_count).toBe(2);

    const made = await bob().rest.checks.create({ ...app, name: "ci", head_sha: pushed, status: "in_progress", details_url: "https://ci.example/1" });
    expect([made.status, made.data]).toEqual([201, expect.objectContaining({ name: "ci", head_sha: pushed, status: "in_progress", conclusion: null, details_url: "https://ci.example/1", completed_at: null })]);
    expect(made.data.pull_requests.map((p) => p.number)).toEqual([1]);
    await bob().rest.checks.create({ ...app, name: "ci", head_sha: pushed, conclusion: "success" });
    // The newest run of a name stands for it, unless all are asked for.
    expect(await names("feature")).toEqual([["ci", "success", false]]);
    expect((await bob().rest.checks.listForRef({ ...app, ref: pushed, filter: "all" })).data.total_count).toBe(2);
  });

  it("validates a new run as GitHub does, and refuses a read-only token", async () => {
    const head = git("rev-parse", "feature").trim();
    const create = (body: Record<string, unknown>) => failure(bob().request("POST /repos/acme/app/check-runs" as string, body));
    for (const [body, field] of [
      [{ head_sha: head }, "name"],
      [{ name: "ci" }, "head_sha"],
      [{ name: "ci", head_sha: head, status: "done" }, "status"],
      [{ name: "ci", head_sha: head, status: "completed" }, "conclusion"],
      [{ name: "ci", head_sha: head, conclusion: "great" }, "conclusion"],
      [{ name: "ci", head_sha: head, started_at: "yesterday" }, "started_at"],
    ] as const) {
      const refused = await create(body);
      expect([JSON.stringify(body), refused.status, refused.response?.data.message, refused.response?.data.errors?.[0]?.field]).toEqual([JSON.stringify(body), 422, "Validation Failed", field]);
    }
    const unknown = await create({ name: "ci", head_sha: "0".repeat(40) });
    expect([unknown.status, unknown.response?.data.message]).toEqual([422, `No commit found for SHA: ${"0".repeat(40)}`]);
    const reader = await failure(client("t-rita").rest.checks.create({ ...app, name: "ci", head_sha: head }));
    expect([reader.status, reader.response?.data.message, reader.response?.headers["x-accepted-github-permissions"]]).toEqual([403, "Resource not accessible by personal access token", "checks=write"]);
    // The control: the same body from a writer is taken.
    expect((await bob().rest.checks.create({ ...app, name: "late", head_sha: head })).data).toMatchObject({ status: "queued", conclusion: null });
  });
});

describe("review threads over GraphQL", () => {
  it("lists threads with their resolved state; a reply joins its thread", async () => {
    const all = await threads();
    const seeded = all.nodes.filter((t) => t.comments.nodes[0]!.author.login === "carol");
    expect(seeded.map((t) => [t.path, t.line, t.isResolved, t.isOutdated, t.comments.nodes.map((c) => c.body)])).toEqual([
      ["src/long.ts", 3, false, false, ["open thread"]],
      ["src/long.ts", 25, true, false, ["settled thread"]],
    ]);
    const root = seeded[0]!.comments.nodes[0]!.databaseId;
    const reply = await bob().request("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments", { ...app, pull_number: 1, body: "agreed", in_reply_to: root } as never);
    expect([reply.status, (reply.data as { in_reply_to_id: number; line: number }).in_reply_to_id]).toEqual([201, root]);
    const after = await threads();
    expect(after.totalCount).toBe(all.totalCount);
    expect(after.nodes.find((t) => t.id === seeded[0]!.id)!.comments.nodes.map((c) => c.body)).toEqual(["open thread", "agreed"]);
  });

  it("resolves and unresolves a thread; a read-only token may not", async () => {
    const open = (await threads()).nodes.find((t) => !t.isResolved)!;
    const MUTATE = `mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }`;
    const denied = await failure(client("t-rita").graphql(MUTATE, { id: open.id }));
    expect((denied as unknown as { errors: { type: string; message: string }[] }).errors).toEqual([expect.objectContaining({ type: "FORBIDDEN", message: "Resource not accessible by personal access token" })]);
    expect((await threads("t-rita")).nodes.find((t) => t.id === open.id)!.isResolved).toBe(false);
    const done = await bob().graphql<{ resolveReviewThread: { thread: { id: string; isResolved: boolean } } }>(MUTATE, { id: open.id });
    expect(done.resolveReviewThread.thread).toEqual({ id: open.id, isResolved: true });
    expect((await threads()).nodes.find((t) => t.id === open.id)!.isResolved).toBe(true);
    const undone = await bob().graphql<{ unresolveReviewThread: { thread: { isResolved: boolean } } }>(`mutation($id: ID!) { unresolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }`, { id: open.id });
    expect(undone.unresolveReviewThread.thread.isResolved).toBe(false);
    const missing = await failure(bob().graphql(MUTATE, { id: "PRRT_nope" }));
    expect((missing as unknown as { errors: { type: string }[] }).errors[0]!.type).toBe("NOT_FOUND");
  });

  it("pages threads by cursor, and answers bad queries with errors as GitHub does", async () => {
    const total = (await threads()).totalCount;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Threads["repository"]["pullRequest"]["reviewThreads"] = (await bob().graphql<Threads>(THREADS, { owner: "acme", name: "app", number: 1, first: 2, after })).repository.pullRequest.reviewThreads;
      seen.push(...page.nodes.map((t) => t.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(new Set(seen).size).toBe(total);

    const raw = async (body: unknown) => {
      const res = await fetch(`${sim.url}/graphql`, { method: "POST", headers: { authorization: "bearer t-bob" }, body: JSON.stringify(body) });
      return { status: res.status, limit: res.headers.get("x-ratelimit-limit"), body: (await res.json()) as { data?: unknown; errors?: { type?: string; message: string }[] } };
    };
    const bad = await raw({ query: "{ repository(owner: \"acme\", name: \"app\") { nope } }" });
    expect([bad.status, bad.limit, bad.body.data, bad.body.errors?.length]).toEqual([200, "5000", undefined, 1]);
    const unknown = await raw({ query: "{ repository(owner: \"acme\", name: \"nope\") { name } }" });
    expect([unknown.status, unknown.body.data, unknown.body.errors?.[0]]).toEqual([200, { repository: null }, expect.objectContaining({ type: "NOT_FOUND", message: "Could not resolve to a Repository with the name 'acme/nope'." })]);
    const unpaged = await raw({ query: "{ repository(owner: \"acme\", name: \"app\") { pullRequest(number: 1) { reviewThreads { totalCount } } } }" });
    expect(unpaged.body.errors?.[0]?.message).toBe("You must provide a `first` or `last` value to properly paginate the `reviewThreads` connection.");
    expect((await raw({})).body.errors?.[0]?.message).toBe("A query attribute must be specified and must be a string.");
    const anonymous = await fetch(`${sim.url}/graphql`, { method: "POST", body: JSON.stringify({ query: "{ viewer { login } }" }) });
    expect(anonymous.status).toBe(401);
    expect((await raw({ query: "{ viewer { login } }" })).body).toEqual({ data: { viewer: { login: "bob" } } });
  });
});
