import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODE_TOKEN_HEADER } from "../../src/api/code.js";
import { CODES } from "../../src/api/errors.js";
import type { Worktree } from "../../src/api/rooms.js";
import { startCodeService, type CodeService } from "../../local-front/bindings/code/service.js";
import { HostClients } from "../../local-front/bindings/code-host/clients.js";
import { Worktrees } from "../../local-front/bindings/git/worktrees.js";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";
import { cleanGitEnv as cleanEnv, gitRepo } from "../support/git-repo.js";

/**
 * The code service's `/git/...` routes against the code-host simulator's git smart HTTP:
 * the mirror fetched with the account's token (which lands in no file), worktrees in both
 * modes, a new round after a push, removal, the code at a line, and a registered checkout
 * of the same repository as the mirror's reference.
 */
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), "git-worktrees-"));
const checkout = join(work, "app");
const TOKEN = `tok-${Math.random().toString(36).slice(2)}-secret`;
const SERVICE_TOKEN = "service-token";
let sim: CodeHostSimulator;
let service: CodeService;
const services: CodeService[] = [];

const gitIn = (cwd: string, ...args: string[]) => run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, env: cleanEnv() }).then((r) => r.stdout.trim());
const inCheckout = (...args: string[]) => gitIn(checkout, ...args);

async function startService(dataDir: string, token: string, roots: string[] = []): Promise<CodeService> {
  const clients = new HostClients([], { url: sim.url, token });
  const s = await startCodeService([], SERVICE_TOKEN, (argv, cwd) => spawn(argv[0]!, argv.slice(1), { cwd }), clients, new Worktrees(dataDir, clients, () => roots));
  services.push(s);
  return s;
}

async function post(s: CodeService, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`http://${s.address}${path}`, { method: "POST", headers: { [CODE_TOKEN_HEADER]: SERVICE_TOKEN, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

/** Every file under `dir`, for a search of its bytes. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile());
}

const dataDir = join(work, "data");

beforeAll(async () => {
  gitRepo(checkout, { "a.txt": "one\ntwo\nthree\n" }, [{ name: "feature/x", files: { "a.txt": "one\nTWO\nthree\nfour\n" } }]);
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { [TOKEN]: { login: "runner", owners: ["acme"] }, "t-other": { login: "eve", owners: ["other"] } },
      repos: [
        { owner: "acme", name: "app", private: true, git: checkout, pulls: [{ number: 3, title: "X", user: "runner", head: "feature/x", base: "main", createdAt: "2026-01-01T00:00:00Z" }] },
        { owner: "acme", name: "nogit", private: true, pulls: [{ number: 1, title: "Y", user: "runner", head: "b", base: "main", createdAt: "2026-01-01T00:00:00Z" }] },
      ],
    }),
  });
  service = await startService(dataDir, TOKEN);
});
afterAll(async () => {
  for (const s of services) await s.close();
  await sim?.close();
  removeDir(work);
});

describe("the runtime's mirror and worktrees", () => {
  let review: Worktree;

  it("makes a review worktree detached at the pull request's head, fetched into a bare mirror", async () => {
    const r = await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-1", mode: "review" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    review = r.body;
    const head = await inCheckout("rev-parse", "feature/x");
    expect(review).toMatchObject({ id: "rev-1", path: join(dataDir, "git", "worktrees", "rev-1"), head: { ref: "feature/x", sha: head }, base: { ref: "main", sha: await inCheckout("rev-parse", "main") }, reference: null });
    expect(readFileSync(join(review.path, "a.txt"), "utf8")).toBe("one\nTWO\nthree\nfour\n");
    expect(await gitIn(review.path, "rev-parse", "HEAD")).toBe(head);
    expect(await gitIn(review.path, "symbolic-ref", "-q", "HEAD").catch(() => "detached")).toBe("detached");
    const mirror = join(dataDir, "git", "mirrors", "acme", "app.git");
    expect(await gitIn(mirror, "rev-parse", "--is-bare-repository")).toBe("true");
    expect(await gitIn(mirror, "rev-parse", "refs/pull/3/head")).toBe(head);
    // The worktree borrows the mirror's objects rather than copying them.
    expect(readFileSync(join(review.path, ".git", "objects", "info", "alternates"), "utf8").trim()).toBe(join(mirror, "objects"));
  });

  it("writes the account's token into no file: no remote URL, config, record or log", async () => {
    const mirrorConfig = readFileSync(join(dataDir, "git", "mirrors", "acme", "app.git", "config"), "utf8");
    expect(mirrorConfig).not.toContain(TOKEN);
    expect(mirrorConfig).not.toMatch(/url\s*=/);
    const encoded = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");
    const files = filesUnder(dataDir);
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const bytes = readFileSync(f, "latin1");
      expect(bytes.includes(TOKEN) || bytes.includes(encoded), f).toBe(false);
    }
  });

  it("answers the code at each line: the head's (RIGHT), the base's (LEFT), null where there is none", async () => {
    const r = await post(service, "/git/lines", {
      id: "rev-1",
      head: review.head.sha,
      base: review.base.sha,
      lines: [
        { path: "a.txt", line: 2, side: "RIGHT" },
        { path: "a.txt", line: 2, side: "LEFT" },
        { path: "a.txt", line: 4, side: "RIGHT" },
        { path: "a.txt", line: 4, side: "LEFT" },
        { path: "missing.txt", line: 1, side: "RIGHT" },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ texts: ["TWO", "two", "four", null, null] });
    const unknown = await post(service, "/git/lines", { id: "nope", head: review.head.sha, base: review.base.sha, lines: [] });
    expect(unknown).toMatchObject({ status: 404, body: { code: CODES.worktreeNotFound } });
  });

  it("moves the review worktree to the new head after a push, when asked again", async () => {
    await inCheckout("checkout", "-q", "feature/x");
    writeFileSync(join(checkout, "a.txt"), "one\nTWO\nthree\nfour\nfive\n");
    await inCheckout("commit", "-qam", "a push");
    await inCheckout("checkout", "-q", "main");
    const pushed = await inCheckout("rev-parse", "feature/x");
    expect(pushed).not.toBe(review.head.sha);
    const r = await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-1", mode: "review" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.head.sha).toBe(pushed);
    expect(r.body.path).toBe(review.path);
    expect(await gitIn(review.path, "rev-parse", "HEAD")).toBe(pushed);
    expect(readFileSync(join(review.path, "a.txt"), "utf8")).toContain("five");
  });

  it("makes a build worktree on a branch named as the pull request's, and leaves its work alone when asked again", async () => {
    const r = await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "build-1", mode: "build" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const path = r.body.path as string;
    expect(await gitIn(path, "symbolic-ref", "--short", "HEAD")).toBe("feature/x");
    writeFileSync(join(path, "b.txt"), "mine\n");
    await gitIn(path, "add", "b.txt");
    await gitIn(path, "commit", "-qm", "the builder's commit");
    const mine = await gitIn(path, "rev-parse", "HEAD");
    const again = await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "build-1", mode: "build" });
    expect(again.status).toBe(200);
    expect(await gitIn(path, "rev-parse", "HEAD")).toBe(mine);
    // The builder's objects are its own: the mirror does not have them.
    expect(await gitIn(join(dataDir, "git", "mirrors", "acme", "app.git"), "cat-file", "-t", mine).catch(() => "missing")).toBe("missing");
    const other = await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "build-1", mode: "review" });
    expect(other).toMatchObject({ status: 409, body: { code: CODES.worktreeModeMismatch } });
  });

  it("removes a worktree, and removing it again is no error", async () => {
    const first = await post(service, "/git/worktrees/remove", { id: "build-1" });
    expect(first).toEqual({ status: 200, body: { id: "build-1", removed: true } });
    expect(existsSync(join(dataDir, "git", "worktrees", "build-1"))).toBe(false);
    const second = await post(service, "/git/worktrees/remove", { id: "build-1" });
    expect(second).toEqual({ status: 200, body: { id: "build-1", removed: false } });
  });

  it("refuses with codes: a pull request the token cannot see, a repository git cannot fetch, a bad body", async () => {
    const hidden = await startService(join(work, "data-other"), "t-other");
    expect(await post(hidden, "/git/worktrees", { repo: "acme/app", pr: 3, id: "x", mode: "review" })).toMatchObject({ status: 404, body: { code: CODES.codeHostNotFound } });
    const nogit = await post(service, "/git/worktrees", { repo: "acme/nogit", pr: 1, id: "y", mode: "review" });
    expect(nogit).toMatchObject({ status: 502, body: { code: CODES.gitFetchFailed } });
    expect(JSON.stringify(nogit.body)).not.toContain(TOKEN);
    expect(existsSync(join(dataDir, "git", "mirrors", "acme", "nogit.git"))).toBe(false);
    expect(await post(service, "/git/worktrees", { repo: "acme/app", pr: 3, id: "../up", mode: "review" })).toMatchObject({ status: 400, body: { code: CODES.invalidBody } });
  });

  it("takes a registered checkout of the same repository as the mirror's reference, then stands on its own", async () => {
    const registered = join(work, "registered");
    await run("git", ["clone", "-q", checkout, registered], { env: cleanEnv() });
    await gitIn(registered, "remote", "set-url", "origin", "https://github.com/Acme/app.git");
    const data = join(work, "data-ref");
    const withRoot = await startService(data, TOKEN, [registered]);
    const r = await post(withRoot, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-2", mode: "review" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.reference).toBe(registered);
    const mirror = join(data, "git", "mirrors", "acme", "app.git");
    // Dissociated: the mirror holds every object itself, so the user's gc cannot break it.
    expect(existsSync(join(mirror, "objects", "info", "alternates"))).toBe(false);
    expect(await gitIn(mirror, "fsck", "--connectivity-only", "--no-dangling").then(() => "ok")).toBe("ok");
    expect(await gitIn(mirror, "cat-file", "-t", `${r.body.base.sha}`)).toBe("commit");
    const again = await post(withRoot, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-2", mode: "review" });
    expect(again.body.reference).toBe(registered);
  });

  it("takes a checkout whose origin names another place when it has the pull request's base commit; an unrelated one never", async () => {
    const unrelated = join(work, "unrelated");
    mkdirSync(unrelated);
    await gitIn(unrelated, "init", "-q", "-b", "main");
    await gitIn(unrelated, "commit", "-q", "--allow-empty", "-m", "elsewhere");
    const copy = join(work, "copy");
    await run("git", ["clone", "-q", checkout, copy], { env: cleanEnv() });
    const alone = await startService(join(work, "data-unrelated"), TOKEN, [unrelated]);
    expect((await post(alone, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-3", mode: "review" })).body.reference).toBeNull();
    const withCopy = await startService(join(work, "data-copy"), TOKEN, [unrelated, copy]);
    expect((await post(withCopy, "/git/worktrees", { repo: "acme/app", pr: 3, id: "rev-3", mode: "review" })).body.reference).toBe(copy);
  });
});
