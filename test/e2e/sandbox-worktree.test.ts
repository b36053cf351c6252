import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostClients } from "../../local-front/bindings/code-host/clients.js";
import { Worktrees, worktreeHolding } from "../../local-front/bindings/git/worktrees.js";
import { Sandbox, type SessionPlaces } from "../../local-front/bindings/sandbox/fence.js";
import { runtimePlaces } from "../../local-front/bindings/sandbox/runtime.js";
import { StartedProcesses } from "../../local-front/bindings/sandbox/started.js";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";
import { cleanGitEnv as cleanEnv, gitRepo } from "../support/git-repo.js";

/**
 * A session in a runtime-owned worktree (under the hidden data directory): a review thread
 * reads it and runs git there but changes nothing; a build thread (the control) writes and
 * commits; neither sees the rest of the data directory, other worktrees or other mirrors.
 * Tested at the sandbox, with worktrees the code service's own code made: the worker side
 * that gives a thread such a cwd is not built yet, so no thread can be spawned into one.
 */
const work = mkdtempSync(join(tmpdir(), "sandbox-worktree-"));
const checkout = join(work, "app");
const dataDir = join(work, "data");
const SECRET = `secret-${Math.random().toString(36).slice(2)}`;
let sim: CodeHostSimulator;
let sandbox: Sandbox;
let reviewPath: string;
let buildPath: string;


/** A shell script in the sandbox for `places`; its output, or the sandbox's refusal. */
function shell(places: SessionPlaces, script: string): string {
  const { file, args } = sandbox.command(["sh", "-c", script], places);
  const r = spawnSync(file, args, { cwd: places.cwd, encoding: "utf8", env: { ...cleanEnv(), HOME: "/nonexistent" } });
  return r.stdout + r.stderr;
}

/** What a session tries beyond its worktree: the data directory's secrets, another mirror, another worktree. */
const snoop = () =>
  [
    `cat ${join(dataDir, "accounts.json")} || true`,
    `cat ${join(dataDir, "git", "mirrors", "other", "secret.git", "marker")} || true`,
    `cat ${join(dataDir, "git", "records", "rev.json")} || true`,
    `ls ${join(dataDir, "git", "mirrors")} || true`,
    `ls ${join(dataDir, "git", "worktrees")} || true`,
  ].join("; ");

beforeAll(async () => {
  gitRepo(checkout, { "a.txt": "one\n" }, [{ name: "feature", files: { "a.txt": "one\nfrom-the-pull\n" } }]);
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { tok: { login: "runner" } },
      repos: [{ owner: "acme", name: "app", git: checkout, pulls: [{ number: 1, title: "F", user: "runner", head: "feature", base: "main", createdAt: "2026-01-01T00:00:00Z" }] }],
    }),
  });
  const clients = new HostClients([], { url: sim.url, token: "tok" });
  const worktrees = new Worktrees(dataDir, clients, () => []);
  const review = await worktrees.ensure({ repo: "acme/app", pr: 1, id: "rev", mode: "review" });
  const build = await worktrees.ensure({ repo: "acme/app", pr: 1, id: "bld", mode: "build" });
  if (!review.ok || !build.ok) throw new Error(JSON.stringify([review, build]));
  reviewPath = review.value.path;
  buildPath = build.value.path;
  writeFileSync(join(dataDir, "accounts.json"), SECRET);
  mkdirSync(join(dataDir, "git", "mirrors", "other", "secret.git"), { recursive: true });
  writeFileSync(join(dataDir, "git", "mirrors", "other", "secret.git", "marker"), SECRET);
  sandbox = Sandbox.start(
    "on",
    { hidden: [dataDir], readable: [], runtime: runtimePlaces(join(import.meta.dirname, "../..")), worktreeOf: (p) => worktreeHolding(dataDir, p) },
    new StartedProcesses(work),
    work,
  );
});
afterAll(async () => {
  sandbox?.close();
  await sim?.close();
  removeDir(work);
});

describe("a session in a runtime-owned worktree", () => {
  it("runs here (bubblewrap is installed by the test setup)", () => {
    expect(sandbox.state).toBe("bwrap");
  });

  it("review: reads the files and runs git log and git diff, but writes nothing, commits nothing", () => {
    const out = shell({ cwd: reviewPath, own: [], worktree: "review" }, [
      "cat a.txt",
      "git log --format=subject:%s -1",
      "git diff --stat HEAD~1 HEAD",
      "git status --short && echo status-ok",
      "(echo x > new.txt && echo wrote-file) || echo no-write",
      "(git -c user.name=t -c user.email=t@t commit -q --allow-empty -m sneaky && echo committed) || echo no-commit",
    ].join("; "));
    expect(out).toContain("from-the-pull");
    expect(out).toContain("subject:feature");
    expect(out).toMatch(/a\.txt \| 1 \+/);
    expect(out).toMatch(/^status-ok$/m);
    expect(out).toContain("no-write");
    expect(out).toContain("no-commit");
    expect(out).not.toContain("wrote-file");
    expect(out).not.toMatch(/^committed$/m);
  });

  it("build (the control): writes and commits in its worktree, the mirror's objects read through alternates", () => {
    const out = shell({ cwd: buildPath, own: [], worktree: "build" }, [
      "echo built > b.txt",
      "git add b.txt",
      "git commit -q -m built && echo committed",
      "git log --format=subject:%s -3",
      "git fsck --connectivity-only --no-progress 2>&1 && echo connected",
    ].join("; "));
    expect(out).toMatch(/^committed$/m);
    expect(out).toContain("subject:built");
    expect(out).toContain("subject:feature");
    expect(out).toMatch(/^connected$/m);
  });

  it("neither sees the data directory beyond its worktree and its mirror, nor writes the mirror", () => {
    for (const [cwd, worktree] of [[reviewPath, "review"], [buildPath, "build"]] as const) {
      const out = shell({ cwd, own: [], worktree }, `${snoop()}; (touch ${join(dataDir, "git", "mirrors", "acme", "app.git", "probe")} && echo wrote-mirror) || echo mirror-read-only`);
      expect(out).not.toContain(SECRET);
      expect(out).toMatch(/accounts\.json: No such file/);
      expect(out).toContain("mirror-read-only");
      // Of the mirrors only its own repository's owner shows; of the worktrees only its own.
      expect(out).not.toMatch(/^other$/m);
      expect(out).toMatch(/^acme$/m);
      expect(out).toContain(worktree === "review" ? "rev" : "bld");
      expect(out).not.toMatch(new RegExp(`^${worktree === "review" ? "bld" : "rev"}$`, "m"));
      expect(out).toMatch(/rev\.json: No such file/);
    }
  });

  it("a review thread in a build worktree is read-only too; a build thread in a review worktree is refused", () => {
    expect(shell({ cwd: buildPath, own: [], worktree: "review" }, "(echo x > c.txt && echo wrote-file) || echo no-write")).toContain("no-write");
    expect(sandbox.refusalFor({ cwd: reviewPath, own: [], worktree: "build" })).toMatch(/review worktree/);
  });

  it("refuses a worktree's directory to a session not told it is one, and the flag on a directory that is no worktree", () => {
    expect(sandbox.refusalFor({ cwd: reviewPath, own: [] })).toMatch(/inside the runtime's private data/);
    const plain = join(work, "plain");
    mkdirSync(plain);
    expect(sandbox.refusalFor({ cwd: plain, own: [], worktree: "review" })).toMatch(/no worktree the runtime made/);
    const stray = join(dataDir, "git", "worktrees", "stray");
    mkdirSync(stray);
    expect(sandbox.refusalFor({ cwd: stray, own: [], worktree: "build" })).toMatch(/no worktree the runtime made/);
  });
});

