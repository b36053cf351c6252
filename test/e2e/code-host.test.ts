import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call } from "../support/http.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-code-host-"));
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-code-host-data-"));
const checkout = join(work, "widgets");
const TOKEN = "ghp_runtime_test_token_1234567890";
/** A fine-grained token that may read the `readers` repositories and write nothing. */
const READ_TOKEN = "ghp_runtime_read_only_token_0987654321";
const fixture = (name: string) => JSON.parse(readFileSync(resolve(import.meta.dirname, "../fixtures/code-host", name), "utf8"));
/**
 * The labelled sets of pull-request pairs (docs/code-host.md, "How well it judges"): the
 * two the rule was built on, held to the target of 9 in 10, and the Go and Rust sets, held
 * out until each was measured once and regression sets since, held to what they measured
 * (a guard against getting worse). `falseDuplicates` are the pairs labelled complementary
 * or unrelated that the rule is known to call duplicates (one in each, measured there);
 * any other would comment wrongly on someone's work.
 */
const SETS = [
  { repo: "overlap-set", seed: "overlap-set.json", pairs: "overlap-pairs.json", floor: 0.9, falseDuplicates: [] },
  { repo: "overlap-python", seed: "overlap-python.json", pairs: "overlap-python-pairs.json", floor: 0.9, falseDuplicates: [] },
  { repo: "overlap-holdout-go", seed: "overlap-holdout-go.json", pairs: "overlap-holdout-go-pairs.json", floor: 0.8, falseDuplicates: ["1/13"] },
  // Held out until measured once (bench/overlap-holdout.ts): 46/84. Its writer calls two
  // changes at different places of one file unrelated, where the rule says complementary.
  { repo: "overlap-holdout-rust", seed: "overlap-holdout-rust.json", pairs: "overlap-holdout-rust-pairs.json", floor: 0.54, falseDuplicates: ["17/20"] },
].map((s) => ({
  repo: s.repo,
  floor: s.floor,
  falseDuplicates: s.falseDuplicates,
  pulls: Seed.parse(fixture(s.seed)).repos[0]!.pulls,
  pairs: fixture(s.pairs).pairs as { a: number; b: number; label: string }[],
}));

let sim: CodeHostSimulator;
let front: Front;
let acting: Front | null = null;

const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: checkout, stdio: "pipe" }).toString();
const write = (path: string, text: string) => (mkdirSync(join(checkout, path, ".."), { recursive: true }), writeFileSync(join(checkout, path), text));
const at = (day: number) => new Date(Date.UTC(2026, 9, day)).toISOString();

beforeAll(async () => {
  mkdirSync(checkout);
  git("init", "-q", "-b", "main");
  write("src/app.ts", "export const name = 'widgets';\nexport const port = 8080;\nexport const debug = false;\n");
  write("old.txt", "to be renamed\n");
  git("add", "-A");
  git("commit", "-qm", "first");
  git("checkout", "-q", "-b", "feature");
  write("src/app.ts", "export const name = 'widgets';\nexport const port = 9090;\nexport const debug = false;\n");
  write("src/new.ts", "export const added = true;\n");
  git("mv", "old.txt", "renamed.txt");
  git("add", "-A");
  git("commit", "-qm", "feature");
  git("checkout", "-q", "main");

  const many = Array.from({ length: 35 }, (_, i) => ({ number: i + 1, title: `Change ${i + 1}`, user: "alice", head: `b${i + 1}`, base: "main", createdAt: at(1 + (i % 28)), state: i < 5 ? "merged" : "open" }));
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      repos: [
        {
          owner: "acme",
          name: "widgets",
          git: checkout,
          protection: { main: { requiredChecks: ["ci"], requiredReviews: 1 } },
          pulls: [
            {
              number: 7,
              title: "Serve on 9090",
              body: "Moves the port.",
              user: "alice",
              head: "feature",
              base: "main",
              createdAt: at(3),
              labels: ["infra"],
              comments: [{ user: "bob", body: "Why 9090?" }],
              reviewComments: [{ user: "carol", body: "Name the constant", path: "src/app.ts", line: 2 }],
              reviews: [{ user: "carol", state: "CHANGES_REQUESTED", body: "One nit." }],
              checks: [
                { name: "ci", conclusion: "success" },
                { name: "lint", status: "in_progress", conclusion: null },
              ],
            },
          ],
        },
        { owner: "acme", name: "many", pulls: many },
        ...SETS.map((set) => ({ owner: "acme", name: set.repo, pulls: set.pulls })),
        { owner: "readers", name: "overlap-set", pulls: SETS[0]!.pulls },
        { owner: "locked", name: "vault", pulls: [] },
      ],
    }),
  });
  sim.addToken(TOKEN, { login: "runtime-bot", owners: ["acme"] });
  sim.addToken(READ_TOKEN, { login: "reader-bot", owners: ["readers"], access: "read" });
  writeFileSync(
    join(dataDir, "accounts.json"),
    JSON.stringify({
      accounts: [
        { id: "acme-bot", provider: "github", token: TOKEN, baseUrl: sim.url, owners: ["acme"] },
        { id: "stale-bot", provider: "github", token: "ghp_revoked", baseUrl: sim.url, owners: ["locked"] },
        { id: "acme-reader", provider: "github", token: READ_TOKEN, baseUrl: sim.url, owners: ["readers"] },
      ],
    }),
  );
  front = await startFront({ dataDir });
});

afterAll(async () => {
  await front?.stop();
  await acting?.stop();
  await sim?.close();
  removeDir(dataDir);
  removeDir(work);
});

describe("pull requests read from the code host", () => {
  it("pages a repository's pull requests, open ones unless asked, newest first", async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { repo: string; prs: { number: number }[]; nextCursor: string | null } = (await call(front.url, "GET", `/github/acme/many/prs?limit=12${cursor ? `&cursor=${cursor}` : ""}`)).body;
      expect(page.repo).toBe("acme/many");
      seen.push(...page.prs.map((p: { number: number }) => p.number));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 6));
    const all = (await call(front.url, "GET", "/github/acme/many/prs?state=all&limit=100")).body.prs as { number: number; state: string; createdAt: string }[];
    expect(all).toHaveLength(35);
    expect(all.filter((p) => p.state === "merged").map((p) => p.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((p) => p.createdAt)).toEqual([...all.map((p) => p.createdAt)].sort().reverse());
  });

  it("answers one pull request's diff from the real repository, in the runtime's shape", async () => {
    const res = await call(front.url, "GET", "/github/acme/widgets/prs/7/diff");
    expect(res.status).toBe(200);
    const head = git("rev-parse", "feature").trim();
    expect(res.body).toMatchObject({ repo: "acme/widgets", number: 7, head: { ref: "feature", sha: head }, base: { ref: "main", sha: git("rev-parse", "main").trim() }, nextCursor: null });
    const byPath = Object.fromEntries(res.body.files.map((f: { path: string }) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(["renamed.txt", "src/app.ts", "src/new.ts"]);
    expect(byPath["renamed.txt"]).toMatchObject({ status: "renamed", previousPath: "old.txt" });
    expect(byPath["src/new.ts"]).toMatchObject({ status: "added", additions: 1, deletions: 0 });
    expect(byPath["src/app.ts"]).toMatchObject({ status: "modified", additions: 1, deletions: 1, hunks: [{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3 }] });
    expect(byPath["src/app.ts"].patch).toContain("-export const port = 8080;\n+export const port = 9090;");
  });

  it("pages the conversation, the review comments and the reviews, in that order", async () => {
    const kinds: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { comments: { kind: string; author: string; body: string }[]; nextCursor: string | null } = (await call(front.url, "GET", `/github/acme/widgets/prs/7/comments?limit=1${cursor ? `&cursor=${cursor}` : ""}`)).body;
      kinds.push(...page.comments.map((c: { kind: string; author: string; body: string }) => `${c.kind}:${c.author}:${c.body}`));
      cursor = page.nextCursor;
    } while (cursor);
    expect(kinds).toEqual(["comment:bob:Why 9090?", "review-comment:carol:Name the constant", "review:carol:One nit."]);
    const review = (await call(front.url, "GET", "/github/acme/widgets/prs/7/comments?cursor=v1.30")).body.comments[0];
    expect(review).toMatchObject({ kind: "review", state: "CHANGES_REQUESTED" });
  });

  it("answers the checks on the head commit", async () => {
    const page = (await call(front.url, "GET", "/github/acme/widgets/prs/7/checks")).body;
    expect(page).toMatchObject({ sha: git("rev-parse", "feature").trim(), total: 2, nextCursor: null });
    expect(page.checks.map((c: { name: string; status: string; conclusion: string | null }) => [c.name, c.status, c.conclusion]).sort()).toEqual([
      ["ci", "completed", "success"],
      ["lint", "in_progress", null],
    ]);
  });

  it("refuses clearly: a missing repository or pull request, a bad path, an owner no account serves, a token the host refuses", async () => {
    expect((await call(front.url, "GET", "/github/acme/nothing/prs")).body.code).toBe("code-host-not-found");
    expect((await call(front.url, "GET", "/github/acme/widgets/prs/99/diff")).body.code).toBe("code-host-not-found");
    for (const path of [
      "/github/-bad/x/prs",
      "/github/acme/widgets/prs/0/diff",
      "/github/acme/widgets/prs/7/checks?cursor=%27",
      "/github/acme/widgets/prs?state=merged",
      // A cursor pages by its own size, and belongs to its own route.
      "/github/acme/many/prs?cursor=2.12&limit=10",
      "/github/acme/widgets/prs/7/comments?cursor=2.30",
      "/github/acme/many/prs?cursor=v2.30",
    ])
      expect((await call(front.url, "GET", path)).status, path).toBe(400);
    for (const repo of ["acme/.", "acme/..", "acme", "a/b/c"]) expect((await call(front.url, "POST", "/github/overlap", { repo })).status, repo).toBe(400);
    const nobody = await call(front.url, "GET", "/github/other/repo/prs");
    expect([nobody.status, nobody.body.code]).toEqual([503, "code-host-unavailable"]);
    const stale = await call(front.url, "GET", "/github/locked/vault/prs");
    expect([stale.status, stale.body.code]).toEqual([503, "code-host-credentials"]);
    expect(stale.body.error).toContain("stale-bot");
    expect(JSON.stringify(stale.body)).not.toContain("ghp_revoked");
  });

  it("passes the host's rate limits on with Retry-After (from its reset, or its own), and reads again once they lift", async () => {
    for (const kind of ["primary", "secondary"] as const) {
      sim.rateLimit(TOKEN, Date.now() + 1500, kind);
      const limited = await call(front.url, "GET", "/github/acme/widgets/prs");
      expect([limited.status, limited.body.code], kind).toEqual([429, "code-host-rate-limited"]);
      expect(Number(limited.headers.get("retry-after")), kind).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers.get("retry-after")), kind).toBeLessThanOrEqual(3);
      await new Promise((r) => setTimeout(r, 1600));
      expect((await call(front.url, "GET", "/github/acme/widgets/prs")).status).toBe(200);
    }
  });

  it("never shows the code-host token: not in an answer, not in the front's log", async () => {
    const answers = await Promise.all(["/github/acme/widgets/prs", "/accounts", "/health"].map((p) => call(front.url, "GET", p)));
    for (const a of answers) expect(JSON.stringify(a.body)).not.toContain(TOKEN);
    expect(front.output()).not.toContain(TOKEN);
  });
});

describe("the overlap pass", () => {
  type Pair = { older: number; newer: number; relation: string; score: number; action: string; evidence: { sharedFiles: string[] } };
  const verdictOf = (pairs: Pair[], a: number, b: number) => pairs.find((p) => p.older === a && p.newer === b)?.relation ?? "unrelated";

  it("labels every pair of a set that shares a file, so the unlisted pairs are ones no rule could call duplicates", () => {
    for (const set of SETS) {
      const listed = new Set(set.pairs.map((p) => `${Math.min(p.a, p.b)}/${Math.max(p.a, p.b)}`));
      const files = set.pulls.map((p) => ({ number: p.number, files: new Set(p.files.flatMap((f) => [f.filename, ...(f.previousFilename ? [f.previousFilename] : [])])) }));
      const unlisted: string[] = [];
      for (const [i, a] of files.entries())
        for (const b of files.slice(i + 1)) {
          const key = `${Math.min(a.number, b.number)}/${Math.max(a.number, b.number)}`;
          if (!listed.has(key) && [...a.files].some((f) => b.files.has(f))) unlisted.push(`${set.repo} ${key}`);
        }
      expect(unlisted).toEqual([]);
      // Labelled pairs that share files but are not duplicates: what the false-duplicate check below has to get right.
      const sharing = set.pairs.filter((p) => p.label !== "duplicate" && [...files.find((f) => f.number === p.a)!.files].some((f) => files.find((x) => x.number === p.b)!.files.has(f)));
      expect(sharing.length, set.repo).toBeGreaterThanOrEqual(5);
    }
  });

  it("classifies the labelled pairs right (9 in 10 of the sets it was built on), calls no other pair a duplicate, and in a dry run touches nothing", async () => {
    for (const set of SETS) {
      let right = 0;
      const wrong: string[] = [];
      const res = await call(front.url, "POST", "/github/overlap", { repo: `acme/${set.repo}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ repo: `acme/${set.repo}`, acting: false, considered: set.pulls.length });
      const pairs = res.body.pairs as Pair[];
      for (const p of set.pairs) {
        if (verdictOf(pairs, p.a, p.b) === p.label) right++;
        else wrong.push(`${set.repo} ${p.a}/${p.b}: ${p.label}, judged ${verdictOf(pairs, p.a, p.b)}`);
      }
      // No duplicate but the labelled ones: among the pairs labelled complementary or unrelated
      // (many of which share a file, a manifest line or a changelog) and among the unlisted.
      const labelOf = new Map(set.pairs.map((p) => [`${Math.min(p.a, p.b)}/${Math.max(p.a, p.b)}`, p.label]));
      const falseDuplicates = pairs
        .filter((p) => p.relation === "duplicate" && labelOf.get(`${Math.min(p.older, p.newer)}/${Math.max(p.older, p.newer)}`) !== "duplicate")
        .map((p) => `${Math.min(p.older, p.newer)}/${Math.max(p.older, p.newer)}`);
      expect(falseDuplicates.filter((p) => !set.falseDuplicates.includes(p)).map((p) => `${set.repo} ${p}: ${labelOf.get(p) ?? "unlisted"}, judged duplicate`)).toEqual([]);
      for (const p of pairs) expect(p.action).toBe(p.relation === "duplicate" ? "would-act" : "none");
      const octokit = new Octokit({ auth: TOKEN, baseUrl: sim.url });
      for (const p of pairs.filter((x) => x.relation === "duplicate"))
        expect((await octokit.rest.issues.listComments({ owner: "acme", repo: set.repo, issue_number: p.newer })).data).toEqual([]);
      expect(right / set.pairs.length, `${set.repo}: ${right}/${set.pairs.length}\n${wrong.join("\n")}`).toBeGreaterThanOrEqual(set.floor);
    }
  });

  it("acting (SERVICE_PR_OVERLAP=on), comments on the newer of a duplicate and labels it, once however often it runs", async () => {
    await front.stop();
    // Someone else's copy of the marker does not stop the pass: only the runtime's own comment counts.
    sim.addToken("ghp_someone_else", { login: "mallory", owners: ["acme"] });
    const forged = new Octokit({ auth: "ghp_someone_else", baseUrl: sim.url });
    await forged.rest.issues.createComment({ owner: "acme", repo: "overlap-set", issue_number: 11, body: "nothing to see <!-- agent-runtime overlap 3/11 -->" });
    acting = await startFront({ dataDir, env: { SERVICE_PR_OVERLAP: "on" } });
    const [first, second] = await Promise.all([
      call(acting.url, "POST", "/github/overlap", { repo: "acme/overlap-set" }),
      call(acting.url, "POST", "/github/overlap", { repo: "acme/overlap-set" }),
    ]);
    const third = await call(acting.url, "POST", "/github/overlap", { repo: "acme/overlap-set" });
    const duplicates = (first.body.pairs as Pair[]).filter((p) => p.relation === "duplicate");
    expect(duplicates.map((p) => `${p.older}/${p.newer}`)).toContain("3/11");
    expect(first.body.acting).toBe(true);
    // The two passes ran one after the other: each pair was acted on by exactly one of them.
    for (const p of duplicates) {
      const actions = [first, second].map((r) => (r.body.pairs as Pair[]).find((x) => x.older === p.older && x.newer === p.newer)!.action).sort();
      expect(actions).toEqual(["acted", "done-before"]);
      expect((third.body.pairs as Pair[]).find((x) => x.older === p.older && x.newer === p.newer)!.action).toBe("done-before");
    }
    const octokit = new Octokit({ auth: TOKEN, baseUrl: sim.url });
    for (const p of duplicates) {
      const comments = (await octokit.rest.issues.listComments({ owner: "acme", repo: "overlap-set", issue_number: p.newer })).data.filter((c) => c.body?.includes(`overlap ${p.older}/${p.newer} -->`) && c.user?.login === "runtime-bot");
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toContain(`#${p.older}`);
      expect((await octokit.rest.issues.listLabelsOnIssue({ owner: "acme", repo: "overlap-set", issue_number: p.newer })).data.map((l) => l.name)).toContain("possible-duplicate");
    }
  });

  it("acting with an account that may only read, says it may not act and writes nothing", async () => {
    const res = await call(acting!.url, "POST", "/github/overlap", { repo: "readers/overlap-set" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ repo: "readers/overlap-set", acting: true });
    const pairs = res.body.pairs as Pair[];
    const duplicates = pairs.filter((p) => p.relation === "duplicate");
    expect(duplicates.map((p) => `${p.older}/${p.newer}`)).toContain("3/11");
    for (const p of pairs) expect(p.action, `${p.older}/${p.newer}`).toBe(p.relation === "duplicate" ? "not-permitted" : "none");
    // The reason names the account and what the host asked for, never the token.
    expect(res.body.notPermitted).toEqual({ code: "code-host-forbidden", error: expect.stringContaining("acme-reader") });
    expect(res.body.notPermitted.error).toContain("issues=write");
    expect(JSON.stringify(res.body)).not.toContain(READ_TOKEN);
    expect(acting!.output()).not.toContain(READ_TOKEN);
    // The host's state: no comment, no label, no new label on the repository.
    sim.addToken("ghp_observer", { login: "observer", access: "read" });
    const octokit = new Octokit({ auth: "ghp_observer", baseUrl: sim.url });
    for (const p of duplicates) {
      expect((await octokit.rest.issues.listComments({ owner: "readers", repo: "overlap-set", issue_number: p.newer })).data, `#${p.newer}`).toEqual([]);
      expect((await octokit.rest.issues.listLabelsOnIssue({ owner: "readers", repo: "overlap-set", issue_number: p.newer })).data.map((l) => l.name)).not.toContain("possible-duplicate");
    }
    expect((await octokit.rest.issues.listLabelsForRepo({ owner: "readers", repo: "overlap-set", per_page: 100 })).data.map((l) => l.name)).not.toContain("possible-duplicate");
  });
});
