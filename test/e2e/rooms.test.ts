import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { gitAt, gitRepo, writeFiles } from "../support/git-repo.js";

/**
 * The whole life of review rooms (docs/rooms.md), through the public routes, on the
 * code-host simulator with a real git repository behind it: arm, adopt, rounds and their
 * conflicts, verdicts through `submit_verdict` on every engine, finalize, stale and
 * superseded rounds, no duplicate findings, the receipt of a stacked pull request, build
 * threads in their worktrees, and what the pull requests cost.
 */
const work = mkdtempSync(join(tmpdir(), "agent-runtime-rooms-"));
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-rooms-data-"));
const checkout = join(work, "widgets");
const TOKEN = "ghp_rooms_test_token_1234567890abcd";
const REPO = "acme/widgets";

let sim_: CodeHostSimulator;
let front: Front;
let octokit: Octokit;

const git = gitAt(checkout);
const write = (path: string, text: string) => writeFiles(checkout, { [path]: text });
const at = (day: number) => new Date(Date.UTC(2026, 9, day)).toISOString();
const APP = ["export const name = 'widgets';", "export const port = 9090;", "export const debug = false;", "export function serve() {", "  return port;", "}", ""].join("\n");

beforeAll(async () => {
  gitRepo(checkout, { "src/app.ts": "export const name = 'widgets';\nexport const port = 8080;\nexport const debug = false;\n", "README.md": "# widgets\n" }, [
    { name: "feature", files: { "src/app.ts": APP } },
    { name: "stack", from: "feature", files: { "src/extra.ts": "export const extra = 1;\n" } },
  ]);
  sim_ = await startCodeHostSimulator({
    seed: Seed.parse({
      repos: [
        {
          owner: "acme",
          name: "widgets",
          git: checkout,
          protection: { main: { requiredChecks: ["ci"], requiredReviews: 1 } },
          pulls: [
            { number: 7, title: "Serve on 9090", body: "Moves the port.", user: "alice", head: "feature", base: "main", createdAt: at(3), checks: [{ name: "ci", conclusion: "failure" }] },
            { number: 8, title: "Extra on top", body: "Stacked on #7.", user: "alice", head: "stack", base: "feature", createdAt: at(4) },
            { number: 9, title: "Already in", body: "", user: "bob", head: "feature", base: "main", state: "merged", createdAt: at(1) },
          ],
        },
      ],
    }),
  });
  sim_.addToken(TOKEN, { login: "runtime-bot", owners: ["acme"] });
  octokit = new Octokit({ auth: TOKEN, baseUrl: sim_.url });
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "acme-bot", provider: "github", token: TOKEN, baseUrl: sim_.url, owners: ["acme"] }] }));
  front = await startFront({ dataDir });
}, 60_000);

afterAll(async () => {
  await front?.stop();
  await sim_?.close();
  removeDir(dataDir);
  removeDir(work);
});

const base = () => front.url;

async function arm(workspace: string, body: Record<string, unknown> = {}): Promise<{ status: number; room: any; body: any }> {
  const res = await call(base(), "POST", `/workspaces/${workspace}/rooms`, { repo: REPO, pr: 7, ...body });
  return { status: res.status, room: res.body.room, body: res.body };
}

/** A round's prompt that has the reviewer call submit_verdict with these findings. */
function verdictPrompt(findings: Record<string, unknown>[], decision = "request_changes"): string {
  return sim({ tool: { name: "submit_verdict", input: { decision, summary: "Two things to fix.", findings } }, reply: "verdict given" }, "review it");
}

const ANCHORED = { path: "src/app.ts", line: 2, severity: "major", body: "The port should come from the environment." };
/** src/app.ts has 7 lines at the head, but only lines the diff shows can hold a comment: README.md is not in the diff. */
const UNANCHORED = { path: "README.md", line: 1, severity: "nit", body: "Mention the new port here." };

async function ready(room: string, n: number, states = ["ready", "failed"]): Promise<any> {
  return waitFor(async () => {
    const r = (await call(base(), "GET", `/rooms/${room}/rounds/${n}`)).body.round;
    return states.includes(r?.state) ? r : null;
  }, 60_000);
}

async function idle(thread: string): Promise<void> {
  await waitFor(async () => (await call(base(), "GET", `/threads/${thread}`)).body.turn === null);
}

async function round(room: any, prompt: string): Promise<any> {
  await idle(room.threadId);
  const started = await call(base(), "POST", `/rooms/${room.id}/rounds`, { prompt });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const r = await ready(room.id, started.body.round.n);
  await idle(room.threadId);
  return r;
}

async function inlineComments(): Promise<{ body: string; path: string; line: number }[]> {
  return (await octokit.pulls.listReviewComments({ owner: "acme", repo: "widgets", pull_number: 7, per_page: 100 })).data as any;
}

describe("review rooms", () => {
  let room: any;

  it("says whether the verdict poster is available, naming the account", async () => {
    const caps = await call(base(), "GET", "/rooms/capabilities");
    expect(caps.status).toBe(200);
    expect(caps.body.verdictPoster.available).toBe(true);
    expect(JSON.stringify(caps.body)).not.toContain(TOKEN);
  });

  it("arms a room for a pull request once; the same pull request again adopts it; an unknown one is the code host's 404", async () => {
    const first = await arm("team");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    room = first.room;
    expect(room).toMatchObject({ key: "team/acme/widgets#7", workspace: "team", repo: REPO, pr: 7, state: "armed", reviewerSeat: "reviewer", rounds: [] });
    expect(room.seats.map((s: any) => s.name)).toContain("reviewer");
    const again = await arm("team");
    expect(again.status).toBe(200);
    expect(again.room.id).toBe(room.id);
    expect((await arm("team", { pr: 99 })).body.code).toBe("code-host-not-found");
    const found = await call(base(), "GET", `/workspaces/team/rooms?repo=${REPO}&pr=7`);
    expect(found.body).toMatchObject({ room: { id: room.id }, round: null });
    expect((await call(base(), "GET", "/rooms/room_0000000000000000")).body.code).toBe("room-not-found");
    // The reviewer works in a read-only worktree at the head, not in anyone's checkout; the thread list shows it as a reviewer.
    const row = (await call(base(), "GET", `/threads/${room.threadId}`)).body;
    expect(row).toMatchObject({ role: "reviewer", type: "review", pr: { repo: REPO, number: 7, room: room.id }, spec: { worktree: "review" } });
    expect(row.spec.cwd.startsWith(dataDir)).toBe(true);
    expect(readFileSync(join(row.spec.cwd, "src/app.ts"), "utf8")).toBe(APP);
    const reviewers = (await call(base(), "GET", "/threads?role=reviewer")).body.threads.map((t: any) => t.id);
    expect(reviewers).toContain(room.threadId);
  });

  it("a round returns its verdict through submit_verdict, with fingerprints; finalize posts one review, the unanchorable finding in its body", async () => {
    const r = await round(room, verdictPrompt([ANCHORED, UNANCHORED]));
    expect(r, JSON.stringify(r)).toMatchObject({ n: 1, state: "ready", head: git("rev-parse", "feature"), base: git("rev-parse", "main"), seat: "reviewer", threadId: room.threadId });
    expect(r.verdict.findings).toHaveLength(2);
    expect(r.verdict.findings[0]).toMatchObject({ ...ANCHORED, side: "RIGHT", fingerprint: expect.stringMatching(/^[0-9a-f]{16,}$/) });
    const fin = await call(base(), "POST", `/rooms/${room.id}/finalize`, {});
    expect(fin.status, JSON.stringify(fin.body)).toBe(200);
    expect(fin.body.review).toMatchObject({ posted: 1, inBody: 1, skipped: 0, commitId: r.head });
    const reviews = (await octokit.pulls.listReviews({ owner: "acme", repo: "widgets", pull_number: 7 })).data;
    const posted = reviews.find((v) => v.id === fin.body.review.id)!;
    expect(posted.state).toBe("CHANGES_REQUESTED");
    expect(posted.body).toContain("Mention the new port here.");
    expect((await inlineComments()).filter((c) => c.body.includes(ANCHORED.body))).toHaveLength(1);
    // Asked again, the finalized round answers the same review and posts nothing.
    const twice = await call(base(), "POST", `/rooms/${room.id}/finalize`, { n: 1 });
    expect(twice.body.review.id).toBe(fin.body.review.id);
    expect((await call(base(), "GET", `/rooms/${room.id}/rounds/1`)).body.round.state).toBe("finalized");
  });

  it("five rounds over an unchanged head post no duplicate comments; a resolved thread's finding is posted again", async () => {
    for (let i = 0; i < 5; i++) {
      // The model words it a little differently each round: the gist is the same.
      const reworded = { ...ANCHORED, body: i % 2 ? "the port should come from the environment" : ANCHORED.body };
      const r = await round(room, verdictPrompt([reworded]));
      expect(r.state, r.failure).toBe("ready");
      const fin = await call(base(), "POST", `/rooms/${room.id}/finalize`, {});
      expect(fin.body.review, JSON.stringify(fin.body)).toMatchObject({ posted: 0, skipped: 1 });
    }
    expect((await inlineComments()).filter((c) => c.body.toLowerCase().includes("port should come from"))).toHaveLength(1);
    // A model words a finding anew in ways no gist survives; it names the earlier one (listed in its message) instead.
    const first = (await call(base(), "GET", `/rooms/${room.id}/rounds/1`)).body.round.verdict.findings[0];
    const anew = { ...ANCHORED, body: "Hard-coding 9090 here means nobody can change the listening port without a rebuild." };
    const unnamed = await round(room, verdictPrompt([anew]));
    expect(unnamed.verdict.findings[0].fingerprint).not.toBe(first.fingerprint);
    const named = await round(room, verdictPrompt([{ ...anew, sameAs: first.fingerprint }]));
    expect(named.verdict.findings[0].fingerprint).toBe(first.fingerprint);
    const asked = (await events(base(), room.threadId)).find((e) => e.kind === "message" && e.seq === named.messageSeq)!;
    expect(asked.body.text).toContain(`\`${first.fingerprint}\` src/app.ts:2`);
    expect((await call(base(), "POST", `/rooms/${room.id}/finalize`, {})).body.review).toMatchObject({ posted: 0, skipped: 1 });
    // A fingerprint the room never raised names nothing: the finding keeps its own.
    const stranger = await round(room, verdictPrompt([{ ...anew, sameAs: "00000000deadbeef" }]));
    expect(stranger.verdict.findings[0].fingerprint).toBe(unnamed.verdict.findings[0].fingerprint);
    const threads = await octokit.graphql<any>(
      `query { repository(owner: "acme", name: "widgets") { pullRequest(number: 7) { reviewThreads(first: 50) { nodes { id isResolved comments(first: 5) { nodes { body } } } } } } }`,
    );
    const ours = threads.repository.pullRequest.reviewThreads.nodes.find((t: any) => t.comments.nodes[0].body.includes(ANCHORED.body));
    await octokit.graphql(`mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }`, { id: ours.id });
    await round(room, verdictPrompt([ANCHORED]));
    const fin = await call(base(), "POST", `/rooms/${room.id}/finalize`, {});
    expect(fin.body.review).toMatchObject({ posted: 1, skipped: 0 });
  });

  it("refuses a round while one runs or the reviewer is busy, fails a round whose turn gives no verdict, and refuses finalizing it", async () => {
    await idle(room.threadId);
    const asking = await call(base(), "POST", `/rooms/${room.id}/rounds`, { prompt: sim({ ask: "Which file first?" }) });
    expect(asking.status).toBe(202);
    const n = asking.body.round.n;
    const question = await waitFor(async () => (await call(base(), "GET", `/threads/${room.threadId}/turn`)).body.waitingOn.questions[0] as string | undefined);
    const running = await call(base(), "POST", `/rooms/${room.id}/rounds`, {});
    expect(running.status).toBe(409);
    expect(running.body).toMatchObject({ code: "round-running", n });
    expect((await call(base(), "POST", `/rooms/${room.id}/finalize`, {})).body).toMatchObject({ code: "verdict-not-ready", state: "running" });
    expect((await call(base(), "POST", `/threads/${room.threadId}/questions/${question}/answer`, { answer: "the app" })).status).toBe(200);
    const failed = await ready(room.id, n);
    expect(failed.state).toBe("failed");
    expect(failed.failure).toContain("submit_verdict");
    expect((await call(base(), "POST", `/rooms/${room.id}/finalize`, {})).body).toMatchObject({ code: "verdict-not-ready", state: "failed" });

    // Someone talking to the reviewer directly keeps it busy.
    await idle(room.threadId);
    await call(base(), "POST", `/threads/${room.threadId}/messages`, { text: sim({ ask: "Busy?" }) });
    const q2 = await waitFor(async () => (await call(base(), "GET", `/threads/${room.threadId}/turn`)).body.waitingOn.questions[0] as string | undefined);
    const busy = await call(base(), "POST", `/rooms/${room.id}/rounds`, {});
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: "reviewer-busy", threadId: room.threadId });
    expect((await call(base(), "POST", `/threads/${room.threadId}/questions/${q2}/dismiss`, {})).status).toBe(200);
    // A failed round is followed by a new one that gives its verdict.
    expect((await round(room, verdictPrompt([ANCHORED], "comment"))).state).toBe("ready");
  });

  it("a newer round supersedes a ready one; a push makes a ready round stale, naming both heads", async () => {
    const older = await round(room, verdictPrompt([ANCHORED]));
    const newer = await round(room, verdictPrompt([ANCHORED], "approve"));
    expect((await call(base(), "GET", `/rooms/${room.id}/rounds/${older.n}`)).body.round.state).toBe("superseded");
    const superseded = await call(base(), "POST", `/rooms/${room.id}/finalize`, { n: older.n });
    expect(superseded.status).toBe(409);
    expect(superseded.body).toMatchObject({ code: "round-superseded", newest: newer.n });
    git("checkout", "-q", "feature");
    write("src/app.ts", `${APP}export const later = true;\n`);
    git("commit", "-qam", "a push after the round");
    git("checkout", "-q", "main");
    const stale = await call(base(), "POST", `/rooms/${room.id}/finalize`, {});
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "round-stale", head: git("rev-parse", "feature"), roundHead: newer.head });
    // The round stays ready; a new round reviews the new head.
    expect((await call(base(), "GET", `/rooms/${room.id}/rounds/${newer.n}`)).body.round.state).toBe("ready");
    const fresh = await round(room, verdictPrompt([ANCHORED], "comment"));
    expect(fresh.head).toBe(git("rev-parse", "feature"));
  });

  it("the receipt says what merging takes: the verdict and checks at the exact head, the stack, the plan, what blocks it", async () => {
    const seven = await call(base(), "GET", `/workspaces/team/prs/7/receipt?repo=${REPO}`);
    expect(seven.status, JSON.stringify(seven.body)).toBe(200);
    const head = git("rev-parse", "feature");
    expect(seven.body).toMatchObject({ repo: REPO, pr: 7, head: { sha: head }, stacked: [{ number: 8 }], ready: false });
    expect(seven.body.verdict).toMatchObject({ roomId: room.id, head });
    // The seed's failing ci ran on the head before the push: at this head the required check has no run.
    expect(seven.body.blocked.map((b: any) => b.code)).toEqual(expect.arrayContaining(["check-missing", "approval-missing", "changes-requested"]));
    await octokit.request("POST /repos/{owner}/{repo}/check-runs", { owner: "acme", repo: "widgets", name: "ci", head_sha: head, status: "completed", conclusion: "failure" });
    const failing = (await call(base(), "GET", `/workspaces/team/prs/7/receipt?repo=${REPO}`)).body;
    expect(failing.checks).toEqual([expect.objectContaining({ name: "ci", conclusion: "failure", required: true })]);
    expect(failing.blocked.map((b: any) => b.code)).toContain("check-failing");
    expect(failing.plan.some((s: any) => s.method.includes("/pulls/7/merge"))).toBe(true);
    const eight = (await call(base(), "GET", `/workspaces/team/prs/8/receipt?repo=${REPO}`)).body;
    expect(eight.baseChain.map((b: any) => b.branch)).toEqual(["feature", "main"]);
    expect(eight.blocked.map((b: any) => b.code)).toEqual(expect.arrayContaining(["base-not-default", "verdict-missing"]));
    // It wrote nothing to the code host.
    expect((await octokit.pulls.listReviews({ owner: "acme", repo: "widgets", pull_number: 8 })).data).toEqual([]);
  });

  it("a build thread works in a worktree of the branch under the data directory, never the checkout, and it goes when the thread is retired", async () => {
    const started = await call(base(), "POST", "/workspaces/team/prs/7/agents", { repo: REPO, title: "make the port configurable" });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const row = (await call(base(), "GET", `/threads/${started.body.threadId}`)).body;
    expect(row).toMatchObject({ role: "fixer", type: "build", pr: { repo: REPO, number: 7, room: null }, spec: { worktree: "build" } });
    expect(row.spec.cwd.startsWith(dataDir)).toBe(true);
    expect(row.spec.cwd).not.toContain(checkout);
    expect(readFileSync(join(row.spec.cwd, "src/app.ts"), "utf8")).toContain("export const later = true;");
    const first = (await events(base(), started.body.threadId)).find((e) => e.kind === "message")!;
    expect(first.body.text).toContain("Serve on 9090");
    // Two build threads for one pull request by default (no hub): a third is refused, naming them.
    const second = await call(base(), "POST", "/workspaces/team/prs/7/agents", { repo: REPO });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const third = await call(base(), "POST", "/workspaces/team/prs/7/agents", { repo: REPO });
    expect(third.status).toBe(409);
    expect(third.body).toMatchObject({ code: "build-seats-full", limit: 2 });
    expect([...third.body.threads].sort()).toEqual([started.body.threadId, second.body.threadId].sort());
    for (const id of [started.body.threadId, second.body.threadId]) {
      await idle(id);
      expect((await call(base(), "DELETE", `/threads/${id}`)).status).toBe(200);
    }
    await waitFor(async () => !existsSync(row.spec.cwd));
  });

  it("a round on every engine returns its verdict through submit_verdict", async () => {
    for (const [engine, spec] of EVERY_ENGINE) {
      const armed = await arm(`team-${engine.replace("_", "-")}`, spec);
      expect(armed.status, JSON.stringify(armed.body)).toBe(201);
      const r = await round(armed.room, verdictPrompt([ANCHORED], "comment"));
      expect([engine, r.state, r.failure]).toEqual([engine, "ready", null]);
      expect(r.verdict.findings[0].fingerprint).toMatch(/^[0-9a-f]{16,}$/);
    }
  }, 180_000);

  it("counts what the threads that worked on each pull request cost, and per merged pull request", async () => {
    await call(base(), "POST", "/workspaces/team/prs/9/agents", { repo: REPO });
    const cost = await waitFor(async () => {
      const c = (await call(base(), "GET", "/metrics/cost-per-merged-pr")).body;
      return c.prs?.some((p: any) => p.pr === 9) ? c : null;
    });
    const seven = cost.prs.find((p: any) => p.pr === 7);
    expect(seven).toMatchObject({ repo: REPO, merged: false });
    expect(seven.threads).toBeGreaterThanOrEqual(5);
    expect(cost.merged.count).toBe(1);
    expect(cost.prs.find((p: any) => p.pr === 9).merged).toBe(true);
    expect(cost.all.count).toBe(cost.prs.length);
  });
});
