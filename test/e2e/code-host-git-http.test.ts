import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeHostSimulator, type CodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";
import { removeDir } from "../support/front.js";
import { cleanGitEnv as cleanEnv, gitRepo } from "../support/git-repo.js";

/** The simulator's git smart HTTP, driven by the real git client: clone, fetch of refs/pull/N/head, and GitHub's refusals. */
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), "code-host-git-http-"));
const checkout = join(work, "app");
let sim: CodeHostSimulator;

const inCheckout = (...args: string[]) => run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: checkout, env: cleanEnv() }).then((r) => r.stdout.trim());

/** git as the runtime runs it: the token in a header given through the environment, never prompted for. */
async function client(cwd: string, token: string | null, ...args: string[]): Promise<{ ok: boolean; out: string }> {
  const auth = token === null ? {} : { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraHeader", GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}` };
  try {
    const r = await run("git", args, { cwd, env: { ...cleanEnv(), GIT_TERMINAL_PROMPT: "0", ...auth } });
    return { ok: true, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { stdout: string; stderr: string };
    return { ok: false, out: e.stdout + e.stderr };
  }
}

beforeAll(async () => {
  gitRepo(checkout, { "a.txt": "one\n" }, [{ name: "feature", files: { "a.txt": "one\ntwo\n" } }]);
  sim = await startCodeHostSimulator({
    seed: Seed.parse({
      tokens: { "t-acme": { login: "bob", owners: ["acme"], access: "read" }, "t-other": { login: "eve", owners: ["other"] } },
      repos: [
        { owner: "acme", name: "app", private: true, git: checkout, pulls: [{ number: 7, title: "Feature", user: "bob", head: "feature", base: "main", createdAt: "2026-01-01T00:00:00Z" }] },
        { owner: "acme", name: "open", git: checkout },
        { owner: "acme", name: "nogit", private: true },
      ],
    }),
  });
});
afterAll(async () => {
  await sim?.close();
  removeDir(work);
});

describe("the code-host simulator's git smart HTTP", () => {
  it("names its clone URL in the repository and in the pull request's head and base", async () => {
    const headers = { authorization: "token t-acme", accept: "application/vnd.github+json" };
    const repo = (await (await fetch(`${sim.url}/repos/acme/app`, { headers })).json()) as { clone_url: string; git_url: string; ssh_url: string };
    expect(repo.clone_url).toBe(`${sim.url}/acme/app.git`);
    expect(repo.git_url).toMatch(/^git:\/\/127\.0\.0\.1:\d+\/acme\/app\.git$/);
    expect(repo.ssh_url).toBe("git@127.0.0.1:acme/app.git");
    const pull = (await (await fetch(`${sim.url}/repos/acme/app/pulls/7`, { headers })).json()) as { head: { repo: { clone_url: string } }; base: { repo: { clone_url: string } } };
    expect(pull.head.repo.clone_url).toBe(`${sim.url}/acme/app.git`);
    expect(pull.base.repo.clone_url).toBe(`${sim.url}/acme/app.git`);
  });

  it("clones a private repository with a token that sees it, refs/pull/N/head at the head branch's tip", async () => {
    const into = join(work, "clone");
    const cloned = await client(work, "t-acme", "clone", "-q", "--bare", `${sim.url}/acme/app.git`, into);
    expect(cloned.ok, cloned.out).toBe(true);
    const fetched = await client(into, "t-acme", "fetch", "-q", "origin", "+refs/pull/7/head:refs/pull/7/head");
    expect(fetched.ok, fetched.out).toBe(true);
    expect((await client(into, null, "rev-parse", "refs/pull/7/head")).out.trim()).toBe(await inCheckout("rev-parse", "feature"));
    expect((await client(into, null, "config", "--get", "remote.origin.url")).out.trim()).toBe(`${sim.url}/acme/app.git`);
  });

  it("moves refs/pull/N/head when the head branch is pushed to, in protocol v0 and v2", async () => {
    const into = join(work, "follow");
    expect((await client(work, "t-acme", "init", "-q", "--bare", into)).ok).toBe(true);
    const before = await inCheckout("rev-parse", "feature");
    await inCheckout("checkout", "-q", "feature");
    writeFileSync(join(checkout, "a.txt"), "one\ntwo\nthree\n");
    await inCheckout("commit", "-qam", "a push");
    await inCheckout("checkout", "-q", "main");
    const after = await inCheckout("rev-parse", "feature");
    expect(after).not.toBe(before);
    for (const version of ["0", "2"]) {
      const r = await client(into, "t-acme", "-c", `protocol.version=${version}`, "fetch", "-q", `${sim.url}/acme/app.git`, `+refs/pull/7/head:refs/v${version}/head`);
      expect(r.ok, r.out).toBe(true);
      expect((await client(into, null, "rev-parse", `refs/v${version}/head`)).out.trim()).toBe(after);
    }
  });

  it("lets anyone fetch a public repository, with no token or another owner's", async () => {
    for (const token of [null, "t-other"]) {
      const r = await client(work, token, "ls-remote", `${sim.url}/acme/open.git`, "refs/heads/main");
      expect(r.ok, r.out).toBe(true);
      expect(r.out).toContain(await inCheckout("rev-parse", "main"));
    }
  });

  it("refuses as GitHub: no or an unknown token on a private repository 401, a token that does not see it 404", async () => {
    for (const token of [null, "t-nobody"]) {
      const r = await client(work, token, "ls-remote", `${sim.url}/acme/app.git`);
      expect(r.ok).toBe(false);
      expect(r.out).toMatch(/Authentication failed|could not read Username|terminal prompts disabled/);
    }
    const hidden = await client(work, "t-other", "ls-remote", `${sim.url}/acme/app.git`);
    expect(hidden.ok).toBe(false);
    expect(hidden.out).toMatch(/Repository not found|not found/);
    const asked = await fetch(`${sim.url}/acme/app.git/info/refs?service=git-upload-pack`);
    expect(asked.status).toBe(401);
    expect(asked.headers.get("www-authenticate")).toBe('Basic realm="GitHub"');
    const basic = (token: string) => ({ authorization: `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}` });
    const other = await fetch(`${sim.url}/acme/app.git/info/refs?service=git-upload-pack`, { headers: basic("t-other") });
    expect(other.status).toBe(404);
    expect(await other.text()).toContain("Repository not found");
    // A repository without a checkout has nothing to serve; one the simulator lacks is missing alike.
    for (const path of ["acme/nogit", "acme/missing"]) expect((await fetch(`${sim.url}/${path}.git/info/refs?service=git-upload-pack`, { headers: basic("t-acme") })).status).toBe(404);
    // The control: the same request with the right token is served.
    const served = await fetch(`${sim.url}/acme/app.git/info/refs?service=git-upload-pack`, { headers: basic("t-acme") });
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    expect(await served.text()).toMatch(/^001e# service=git-upload-pack\n0000/);
  });

  it("refuses a push, whatever the token", async () => {
    const into = join(work, "pusher");
    expect((await client(work, "t-acme", "clone", "-q", `${sim.url}/acme/app.git`, into)).ok).toBe(true);
    const r = await client(into, "t-acme", "push", "origin", "HEAD:refs/heads/pushed");
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(/403|denied/);
    expect((await inCheckout("branch", "--list", "pushed"))).toBe("");
  });
});
