import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_DIR, removeDir } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-gates-"));
afterAll(() => removeDir(work));

const front = useFront();

const spawn = async (spec: Record<string, unknown> = {}) => (await call(front().url, "POST", "/spawn", { model: "sim-1", permissions: "allow", ...spec })).body.threadId as string;

async function settled(parent: string, operation: string): Promise<void> {
  await waitFor(async () => (await call(front().url, "GET", `/threads/${parent}/operations/${operation}`)).body.state !== "open", 30_000);
}

describe("cycle events", () => {
  it("records one in the log, its data whole", async () => {
    const id = await spawn();
    const r = await call(front().url, "POST", `/threads/${id}/events`, { kind: "check", step: "build", status: "passed", text: "tsc", data: { ms: 1200 } });
    expect(r.status).toBe(201);
    expect((await events(front().url, id)).find((e) => e.seq === r.body.seq)).toMatchObject({ kind: "cycle", body: { cycle: "check", step: "build", status: "passed", text: "tsc", data: { ms: 1200 } } });
    expect((await call(front().url, "POST", `/threads/${id}/events`, { kind: "party" })).status).toBe(400);
  });
});

describe("gates", () => {
  it("auto: passes on finished children and passing checks, and refuses with reasons as a normal result", async () => {
    const base = front().url;
    const parent = await spawn();
    const good = (await call(base, "POST", `/threads/${parent}/operations`, { kind: "delegation", title: "good", prompt: "fine" })).body.operation as string;
    const bad = (await call(base, "POST", `/threads/${parent}/operations`, { kind: "delegation", title: "bad", prompt: sim({ fail: "server" }) })).body.operation as string;
    await settled(parent, good);
    await settled(parent, bad);
    const refused = await call(base, "POST", `/threads/${parent}/gate`, { mode: "auto", step: "review", checks: [{ name: "lint", ok: false, detail: "2 errors" }] });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ mode: "auto", step: "review", passed: false });
    expect(refused.body.reasons).toEqual([expect.stringContaining(`operation ${bad} (bad) failed`), "check lint failed: 2 errors"]);
    const passed = await call(base, "POST", `/threads/${parent}/gate`, { mode: "auto", operations: [good], checks: [{ name: "lint", ok: true }] });
    expect(passed.body).toMatchObject({ passed: true, reasons: [] });
    expect((await events(base, parent)).filter((e) => e.kind === "gate").map((e) => e.body.passed)).toEqual([false, true]);
  });

  it("human: opens an approval (an attention item), and the approval route decides it", async () => {
    const base = front().url;
    const id = await spawn();
    const opened = await call(base, "POST", `/threads/${id}/gate`, { mode: "human", step: "ship", question: "Ship it?", async: true });
    expect(opened.body).toMatchObject({ mode: "human", passed: null, approvalId: expect.stringMatching(/^appr_/) });
    const approvalId = opened.body.approvalId as string;
    expect((await call(base, "GET", "/workspaces/default/approvals")).body.approvals.map((a: { approvalId: string }) => a.approvalId)).toContain(approvalId);
    expect(JSON.stringify((await call(base, "GET", "/attention")).body)).toContain(approvalId);
    expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" })).body.decision).toBe("allow");
    const gate = await waitFor(async () => (await events(base, id)).find((e) => e.kind === "gate"));
    expect(gate.body).toMatchObject({ gate: opened.body.gate, mode: "human", step: "ship", passed: true, approvalId });
    // A caller that waits gets the decision itself; a deny is a result with its reason.
    const waiting = call(base, "POST", `/threads/${id}/gate`, { mode: "human", step: "again" });
    const second = await waitFor(async () => (await call(base, "GET", "/workspaces/default/approvals")).body.approvals.find((a: { threadId: string; approvalId: string }) => a.threadId === id && a.approvalId !== approvalId));
    await call(base, "POST", `/threads/${id}/approvals/${second.approvalId}`, { decision: "deny" });
    expect((await waiting).body).toMatchObject({ passed: false, reasons: ["a person denied it"], step: "again" });
  });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-C", cwd, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { encoding: "utf8" }).trim();
}

/** A repository with one commit of `a.txt`, and a worktree on its own branch for a child. */
function repoWithWorktree(branch: string): { repo: string; tree: string } {
  const repo = mkdtempSync(join(work, "repo-"));
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a.txt"), "a\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "first");
  const tree = join(work, `${branch}-${Date.now()}`);
  git(repo, "worktree", "add", "-q", "-b", branch, tree);
  return { repo, tree };
}

describe("merge", () => {
  it("merges a child's branch from its worktree into the parent's checkout, and says alreadyMerged after", async () => {
    const base = front().url;
    const { repo, tree } = repoWithWorktree("child-work");
    writeFileSync(join(tree, "b.txt"), "from the child\n");
    git(tree, "add", ".");
    git(tree, "commit", "-q", "-m", "child's work");
    const parent = await spawn({ cwd: repo });
    const atSeq = (await events(base, parent)).at(-1)!.seq;
    const child = (await call(base, "POST", `/threads/${parent}/fork`, { atSeq, cwd: tree })).body.threadId as string;
    const merged = await call(base, "POST", `/threads/${parent}/merge`, { child });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(merged.body).toMatchObject({ child, alreadyMerged: false, head: git(tree, "rev-parse", "HEAD"), commit: git(repo, "rev-parse", "HEAD") });
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("from the child\n");
    const again = await call(base, "POST", `/threads/${parent}/merge`, { child });
    expect(again.body).toMatchObject({ alreadyMerged: true, commit: null });
    expect((await events(base, parent)).filter((e) => e.kind === "merge").map((e) => e.body.alreadyMerged)).toEqual([false, true]);
    const stranger = await spawn({ cwd: tree });
    expect((await call(base, "POST", `/threads/${parent}/merge`, { child: stranger })).body.code).toBe("not-a-child");
  });

  it("runs the merge's git fenced as the parent's session: a hook the session planted in its checkout runs there, and nowhere else", async () => {
    const base = front().url;
    const { repo, tree } = repoWithWorktree("hooked");
    writeFileSync(join(tree, "c.txt"), "child\n");
    git(tree, "add", ".");
    git(tree, "commit", "-q", "-m", "child");
    // What a session may write in its own checkout: a hook that git runs after the merge.
    const outside = join(work, "escaped-from-a-hook");
    const intoRuntime = join(PROJECT_DIR, "escaped-from-a-hook");
    writeFileSync(join(repo, ".git", "hooks", "post-merge"), `#!/bin/sh\necho ran > hook-ran\necho out > ${outside}\necho out > ${intoRuntime}\nexit 0\n`, { mode: 0o755 });
    const parent = await spawn({ cwd: repo });
    const child = (await call(base, "POST", `/threads/${parent}/fork`, { atSeq: 1, cwd: tree })).body.threadId as string;
    const merged = await call(base, "POST", `/threads/${parent}/merge`, { child });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    // The control: the hook ran, in the checkout.
    expect(readFileSync(join(repo, "hook-ran"), "utf8")).toBe("ran\n");
    // Outside the checkout it wrote nothing: not beside it, not into the runtime's own code.
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(intoRuntime)).toBe(false);
  });

  it("leaves the checkout as it was when the merge conflicts", async () => {
    const base = front().url;
    const { repo, tree } = repoWithWorktree("clash");
    writeFileSync(join(tree, "a.txt"), "child\n");
    git(tree, "commit", "-q", "-am", "child");
    writeFileSync(join(repo, "a.txt"), "parent\n");
    git(repo, "commit", "-q", "-am", "parent");
    const before = git(repo, "rev-parse", "HEAD");
    const parent = await spawn({ cwd: repo });
    const child = (await call(base, "POST", `/threads/${parent}/fork`, { atSeq: 1, cwd: tree })).body.threadId as string;
    const clash = await call(base, "POST", `/threads/${parent}/merge`, { child });
    expect([clash.status, clash.body.code, clash.body.files]).toEqual([409, "merge-conflict", ["a.txt"]]);
    expect(git(repo, "rev-parse", "HEAD")).toBe(before);
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(existsSync(join(repo, ".git", "MERGE_HEAD"))).toBe(false);
    // A person's merge in progress in the checkout is left alone.
    expect(() => git(repo, "merge", "clash")).toThrow();
    const busy = await call(base, "POST", `/threads/${parent}/merge`, { child });
    expect([busy.status, busy.body.code]).toEqual([409, "merge-failed"]);
    expect(existsSync(join(repo, ".git", "MERGE_HEAD"))).toBe(true);
  });
});
