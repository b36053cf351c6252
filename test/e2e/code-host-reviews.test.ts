import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Outcome } from "../../src/api/outcome.js";
import { findingMarker, type Capabilities, type MergeFacts, type PostReview, type ReviewContext } from "../../src/api/rooms.js";
import { HostClients } from "../../local-front/bindings/code-host/clients.js";
import { codeHostRoute } from "../../local-front/bindings/code-host/routes.js";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";
import { gitAt, gitRepo, writeFiles } from "../support/git-repo.js";

/** The front's review operations behind the CODE binding, against the code-host simulator with a real git repository behind it. */
const work = mkdtempSync(join(tmpdir(), "agent-runtime-code-host-review-ops-"));
const checkout = join(work, "app");
let sim: CodeHostSimulator;
let bot: HostClients;

const git = gitAt(checkout);
const write = (path: string, text: string) => writeFiles(checkout, { [path]: text });
const sha = (ref: string) => git("rev-parse", ref).trim();
const lines = (changed: Record<number, string>) => Array.from({ length: 30 }, (_, i) => changed[i + 1] ?? `line ${i + 1}`).join("\n") + "\n";
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const octokit = (auth: string) => new Octokit({ auth, baseUrl: sim.url, log: quiet });
const app = { owner: "acme", repo: "app" };

function call<T>(clients: HostClients, method: string, path: string, body?: unknown): Promise<Outcome<T>> {
  return codeHostRoute(clients, method, new URL(path, "http://code.internal"), async () => body) as Promise<Outcome<T>>;
}
type Posted = { id: number; posted: number; inBody: number; skipped: number; url: string | null; commitId: string };
const value = <T>(o: Outcome<T>): T => {
  if (!o.ok) expect.unreachable(`refused: ${JSON.stringify(o.body)}`);
  return (o as { value: T }).value;
};
const finding = (fingerprint: string, path: string, line: number, side: "RIGHT" | "LEFT" = "RIGHT") => ({ path, line, side, severity: "major" as const, body: `about ${path}:${line}`, fingerprint });
const review = (commitId: string, findings: PostReview["findings"], decision: PostReview["decision"] = "comment"): PostReview => ({ commitId, decision, summary: "Looked it over.", findings, source: "room r1, round 1" });

beforeAll(async () => {
  const base = { "src/long.ts": lines({}), "src/other.ts": "untouched\n" };
  gitRepo(checkout, base, [
    ...["loop-a", "loop-b", "mine"].map((name) => ({ name, files: { [`${name}.txt`]: `${name}\n` } })),
    { name: "feature", files: { "src/long.ts": lines({ 3: "line three", 25: "line twenty-five" }) } },
    { name: "stacked", from: "feature", files: { "src/other.ts": "touched\n" } },
  ]);
  const pull = (number: number, head: string, base: string, more: Record<string, unknown> = {}) => ({ number, title: `PR ${number}`, user: "alice", head, base, createdAt: `2026-01-0${number}T12:00:00Z`, ...more });
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { "t-bot": { login: "runtime-bot" }, "t-read": { login: "reader", access: "read" } },
      repos: [
        {
          owner: "acme",
          name: "app",
          git: checkout,
          protection: { main: { requiredChecks: ["ci"], requiredReviews: 1 }, feature: { requiredChecks: ["ci", "lint"], requiredReviews: 2 } },
          pulls: [
            pull(1, "feature", "main", {
              comments: [{ user: "carol", body: "First!", createdAt: "2026-01-01T13:00:00Z" }],
              // Someone quoting a marker does not make it the runtime's.
              reviewComments: [{ user: "carol", body: `quoting ${findingMarker("eeeeeeee00")}`, path: "src/long.ts", line: 25, createdAt: "2026-01-01T14:00:00Z" }],
              reviews: [{ user: "carol", state: "COMMENTED", body: "A look.", submittedAt: "2026-01-01T15:00:00Z" }],
            }),
            pull(2, "stacked", "feature", {
              checks: [{ name: "ci", conclusion: "failure" }, { name: "lint" }],
              reviews: [
                { user: "carol", state: "APPROVED", submittedAt: "2026-01-02T13:00:00Z" },
                { user: "carol", state: "COMMENTED", body: "one more thought", submittedAt: "2026-01-02T14:00:00Z" },
                { user: "dave", state: "APPROVED", submittedAt: "2026-01-02T13:00:00Z" },
                { user: "dave", state: "CHANGES_REQUESTED", body: "on second thought", submittedAt: "2026-01-02T15:00:00Z" },
              ],
            }),
            pull(3, "mine", "main", { user: "runtime-bot" }),
            pull(4, "loop-a", "loop-b"),
            pull(5, "loop-b", "loop-a"),
          ],
        },
        {
          owner: "acme",
          name: "liar",
          // A patch whose header claims more lines than it holds: the host knows better than the header.
          pulls: [pull(1, "topic", "main", { files: [{ filename: "a.txt", patch: "@@ -1,2 +1,5 @@\n-a\n+b" }] })],
        },
      ],
    }),
  });
  bot = new HostClients([], { url: sim.url, token: "t-bot" });
});

afterAll(async () => {
  await sim?.close();
  removeDir(work);
});

describe("what a reviewer is given", () => {
  it("answers the pull request, its files with patches, and its conversation oldest first", async () => {
    const pull = value(await call<{ head: { sha: string }; author: string }>(bot, "GET", "/github/acme/app/prs/1"));
    expect(pull).toMatchObject({ number: 1, author: "alice", head: { ref: "feature", sha: sha("feature") }, base: { ref: "main", sha: sha("main") } });
    const context = value(await call<ReviewContext>(bot, "GET", "/github/acme/app/prs/1/context"));
    expect(context.files).toEqual([{ path: "src/long.ts", status: "modified", additions: 2, deletions: 2, patch: expect.stringMatching(/^@@ -1,6 \+1,6 @@/) }]);
    expect(context.comments.map((c) => [c.kind, c.author])).toEqual([
      ["comment", "carol"],
      ["review-comment", "carol"],
      ["review", "carol"],
    ]);
    expect(context.truncated).toBe(false);
    const missing = await call(bot, "GET", "/github/acme/app/prs/99/context");
    expect(missing).toMatchObject({ ok: false, status: 404, body: { code: "code-host-not-found" } });
  });
});

describe("posting a verdict as one review", () => {
  it("anchors findings in the diff inline, puts the rest in the body, and skips those already on an unresolved thread", async () => {
    const head = sha("feature");
    const A = finding("aaaaaaaa01", "src/long.ts", 3);
    const B = finding("bbbbbbbb02", "src/long.ts", 3, "LEFT");
    const C = finding("cccccccc03", "src/long.ts", 12);
    const D = finding("dddddddd04", "src/other.ts", 1);
    const E = finding("eeeeeeee00", "src/long.ts", 25);
    const first = value(await call<Posted>(bot, "POST", "/github/acme/app/prs/1/review", review(head, [A, B, C, D, E, A])));
    expect(first).toMatchObject({ posted: 3, inBody: 2, skipped: 1, commitId: head, url: expect.stringContaining("#pullrequestreview-") });
    const onHost = (await octokit("t-bot").rest.pulls.listReviews({ ...app, pull_number: 1 })).data.find((r) => r.id === first.id)!;
    expect(onHost.state).toBe("COMMENTED");
    expect(onHost.commit_id).toBe(head);
    expect(onHost.body).toContain("Looked it over.");
    expect(onHost.body).toContain("`src/long.ts:12` **major**: about src/long.ts:12");
    expect(onHost.body).toContain("`src/other.ts:1` **major**");
    expect(onHost.body).toContain("room r1, round 1");
    const inline = (await octokit("t-bot").rest.pulls.listReviewComments({ ...app, pull_number: 1 })).data.filter((c) => c.pull_request_review_id === first.id);
    expect(inline.map((c) => [c.line, c.side, c.body.endsWith(findingMarker(c.body.includes(":25") ? E.fingerprint : c.side === "LEFT" ? B.fingerprint : A.fingerprint))])).toEqual([
      [3, "RIGHT", true],
      [3, "LEFT", true],
      [25, "RIGHT", true],
    ]);

    // The same verdict again: everything inline is on an unresolved thread already.
    const again = value(await call<Posted>(bot, "POST", "/github/acme/app/prs/1/review", review(head, [A, B, C, D, E])));
    expect(again).toMatchObject({ posted: 0, inBody: 2, skipped: 3 });

    // Someone resolves A's thread: A is posted again, the others stay skipped.
    const THREADS = `query { repository(owner: "acme", name: "app") { pullRequest(number: 1) { reviewThreads(first: 100) { nodes { id comments(first: 1) { nodes { body } } } } } } }`;
    const threads = (await octokit("t-bot").graphql<{ repository: { pullRequest: { reviewThreads: { nodes: { id: string; comments: { nodes: { body: string }[] } }[] } } } }>(THREADS)).repository.pullRequest.reviewThreads.nodes;
    const ofA = threads.find((t) => t.comments.nodes[0]!.body.includes(findingMarker(A.fingerprint)))!;
    await octokit("t-bot").graphql(`mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }`, { id: ofA.id });
    const third = value(await call<Posted>(bot, "POST", "/github/acme/app/prs/1/review", review(head, [A, B, E])));
    expect(third).toMatchObject({ posted: 1, inBody: 0, skipped: 2 });
  });

  it("refuses a round whose head the pull request has left with 409 round-stale, posting nothing", async () => {
    const before = (await octokit("t-bot").rest.pulls.listReviews({ ...app, pull_number: 1 })).data.length;
    const stale = await call(bot, "POST", "/github/acme/app/prs/1/review", review(sha("main"), [finding("aaaaaaaa01", "src/long.ts", 3)]));
    expect(stale).toMatchObject({ ok: false, status: 409, body: { code: "round-stale", head: sha("feature"), roundHead: sha("main") } });
    expect((await octokit("t-bot").rest.pulls.listReviews({ ...app, pull_number: 1 })).data.length).toBe(before);
    const bad = await call(bot, "POST", "/github/acme/app/prs/1/review", { commitId: "nope" });
    expect(bad).toMatchObject({ ok: false, status: 400, body: { code: "invalid-body" } });
  });

  it("refuses approving the account's own pull request with a code of its own; a comment goes through", async () => {
    const own = await call(bot, "POST", "/github/acme/app/prs/3/review", review(sha("mine"), [], "approve"));
    expect(own).toMatchObject({ ok: false, status: 409, body: { code: "review-own-pull-request" } });
    expect(value(await call<Posted>(bot, "POST", "/github/acme/app/prs/3/review", review(sha("mine"), [], "comment")))).toMatchObject({ posted: 0, inBody: 0, skipped: 0 });
  });

  it("posts again with every finding in the body when the host refuses a placement the patch allowed", async () => {
    const liar = { owner: "acme", repo: "liar" };
    const head = (await octokit("t-bot").rest.pulls.get({ ...liar, pull_number: 1 })).data.head.sha;
    const posted = value(await call<Posted>(bot, "POST", "/github/acme/liar/prs/1/review", review(head, [finding("ffffffff05", "a.txt", 4)], "request_changes")));
    expect(posted).toMatchObject({ posted: 0, inBody: 1, skipped: 0 });
    const onHost = (await octokit("t-bot").rest.pulls.listReviews({ ...liar, pull_number: 1 })).data.find((r) => r.id === posted.id)!;
    expect([onHost.state, onHost.body.includes("`a.txt:4`")]).toEqual(["CHANGES_REQUESTED", true]);
  });

  it("maps a read-only token's 403 to code-host-forbidden, and capabilities remember it", async () => {
    const reader = new HostClients([], { url: sim.url, token: "t-read" });
    expect(value(await call<Capabilities>(reader, "GET", "/github/capabilities"))).toEqual({ verdictPoster: { available: true } });
    const refused = await call(reader, "POST", "/github/acme/app/prs/1/review", review(sha("feature"), [finding("99999999aa", "src/long.ts", 3)]));
    expect(refused).toMatchObject({ ok: false, status: 503, body: { code: "code-host-forbidden" } });
    const after = value(await call<Capabilities>(reader, "GET", "/github/capabilities")).verdictPoster;
    expect(after.available).toBe(false);
    expect(after.reason).toContain("account simulator");
    expect(after.reason).not.toContain("t-read");
    // The writer's capability stands.
    expect(value(await call<Capabilities>(bot, "GET", "/github/capabilities"))).toEqual({ verdictPoster: { available: true } });
    const nobody = value(await call<Capabilities>(new HostClients([], { url: sim.url, token: "t-unknown" }), "GET", "/github/capabilities")).verdictPoster;
    expect([nobody.available, nobody.reason]).toEqual([false, expect.stringContaining("account simulator cannot sign in")]);
  });
});

describe("merge facts", () => {
  it("for a stacked pull request: its failing required check at the head, its chain to main, the reviews that stand; none after a push", async () => {
    const facts = value(await call<MergeFacts>(bot, "GET", "/github/acme/app/prs/2/merge-facts"));
    expect(facts).toMatchObject({
      pull: { number: 2, head: { ref: "stacked", sha: sha("stacked") }, base: { ref: "feature" } },
      defaultBranch: "main",
      checks: [
        { name: "ci", status: "completed", conclusion: "failure" },
        { name: "lint", status: "completed", conclusion: "success" },
      ],
      protection: { requiredChecks: ["ci", "lint"], requiredReviews: 2 },
      baseChain: [
        { branch: "feature", pr: 1 },
        { branch: "main", pr: null },
      ],
      stacked: [],
    });
    expect(facts.reviews).toEqual([
      { author: "carol", state: "APPROVED", commitId: sha("stacked") },
      { author: "dave", state: "CHANGES_REQUESTED", commitId: sha("stacked") },
    ]);
    const base = value(await call<MergeFacts>(bot, "GET", "/github/acme/app/prs/1/merge-facts"));
    expect(base).toMatchObject({ stacked: [{ number: 2, title: "PR 2", head: "stacked" }], baseChain: [{ branch: "main", pr: null }], protection: { requiredChecks: ["ci"], requiredReviews: 1 }, checks: [] });

    git("checkout", "-q", "stacked");
    write("src/other.ts", "touched again\n");
    git("commit", "-qam", "a push");
    git("checkout", "-q", "main");
    const pushed = value(await call<MergeFacts>(bot, "GET", "/github/acme/app/prs/2/merge-facts"));
    expect([pushed.pull.head.sha, pushed.checks]).toEqual([sha("stacked"), []]);
  });

  it("says the protection is unreadable, never absent, when the code host will not show it to the account", async () => {
    const reader = new HostClients([], { url: sim.url, token: "t-read" });
    const facts = value(await call<MergeFacts>(reader, "GET", "/github/acme/app/prs/1/merge-facts"));
    expect(facts.protection).toBeNull();
    expect(facts.protectionUnreadable).toMatch(/^403 .*account simulator/);
    // The control: the account that may read it gets the rules.
    expect(value(await call<MergeFacts>(bot, "GET", "/github/acme/app/prs/1/merge-facts")).protectionUnreadable).toBeUndefined();
  });

  it("stops a base chain that loops, and answers no protection for an unprotected base", async () => {
    const facts = value(await call<MergeFacts>(bot, "GET", "/github/acme/app/prs/4/merge-facts"));
    expect(facts.baseChain).toEqual([
      { branch: "loop-b", pr: 5 },
      { branch: "loop-a", pr: 4 },
    ]);
    expect(facts.protection).toBeNull();
  });
});
