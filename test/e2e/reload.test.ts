import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive } from "../../local-front/process/data-lock.js";
import { freePort, PROJECT_DIR, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";

/**
 * scripts/reload on a checkout of its own: `upstream` is a repository holding this
 * working tree as it is now (uncommitted work included), `checkout` a clone of it that
 * the front runs from and the script pulls into.
 */
const root = mkdtempSync(join(tmpdir(), "agent-runtime-reload-"));
const upstream = join(root, "upstream");
const checkout = join(root, "checkout");
const dataDir = join(root, "data");
let port: number;
let front: Front;
const base = () => `http://127.0.0.1:${port}`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=reload-test", "-c", "user.email=reload-test@localhost", ...args], { cwd, encoding: "utf8" }).trim();
}

function snapshotWorkingTree(): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: PROJECT_DIR, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && existsSync(join(PROJECT_DIR, f)));
  for (const f of files) {
    mkdirSync(dirname(join(upstream, f)), { recursive: true });
    copyFileSync(join(PROJECT_DIR, f), join(upstream, f));
  }
  git(upstream, "init", "-q", "-b", "main");
  git(upstream, "add", "-A");
  git(upstream, "commit", "-q", "-m", "the working tree under test");
}

const frontPid = (): number => JSON.parse(readFileSync(join(dataDir, "front.pid"), "utf8")).front;

function reload(env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn("bash", [join(checkout, "scripts/reload")], {
    cwd: root,
    env: { ...process.env, SERVICE_AGENTS_PORT: String(port), SERVICE_AGENTS_DATA_DIR: dataDir, BOUNCE_SKIP_INSTALL: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => (stdout += d));
  proc.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve) => proc.once("exit", (code) => resolve({ code, stdout, stderr })));
}

async function spawnThread(): Promise<string> {
  const r = await call(base(), "POST", "/spawn", {});
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const turnOf = async (id: string) => (await call(base(), "GET", `/threads/${id}/turn`)).body;

beforeAll(async () => {
  snapshotWorkingTree();
  git(root, "clone", "-q", upstream, checkout);
  // The test's own dependencies stand in for `npm ci` (BOUNCE_SKIP_INSTALL=1).
  symlinkSync(join(PROJECT_DIR, "node_modules"), join(checkout, "node_modules"));
  port = await freePort();
  front = await startFront({ projectDir: checkout, dataDir, env: { SERVICE_AGENTS_PORT: String(port) } });
});

afterAll(async () => {
  const last = existsSync(join(dataDir, "front.pid")) ? frontPid() : null;
  if (front?.proc.exitCode === null) await front.stop();
  // The front the script started is not this process's child: stop it by its pid.
  if (last && last !== front?.proc.pid && alive(last)) {
    process.kill(last, "SIGTERM");
    await waitFor(async () => !alive(last), 20_000);
  }
  removeDir(root);
});

describe("scripts/reload", () => {
  it("gives up when a turn outlasts BOUNCE_WAIT_SECONDS: the drain is disarmed and nothing restarts", async () => {
    const id = await spawnThread();
    await call(base(), "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo waiting" } } }) });
    const approvalId = await waitFor(async () => (await turnOf(id)).waitingOn.approvals[0]);
    const pid = frontPid();

    const r = await reload({ BOUNCE_WAIT_SECONDS: "1" });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/^reload: 3\/5 drain armed \(owner reload\); threads mid-turn: 1$/m);
    expect(r.stderr).toContain(`threads still mid-turn after 1s: 1 (${id}); drain disarmed, nothing restarted`);
    expect((await call(base(), "GET", "/drain")).body).toMatchObject({ armed: false, owner: null });
    expect(frontPid()).toBe(pid);
    expect(front.proc.exitCode).toBeNull();

    expect((await call(base(), "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" })).status).toBe(200);
    await waitFor(async () => !(await turnOf(id)).running);
  });

  it("pulls, drains, waits out the turn mid-flight, restarts the runtime, and the drain is gone after", async () => {
    writeFileSync(join(upstream, "RELOADED"), "a commit for the reload to pull\n");
    git(upstream, "add", "RELOADED");
    git(upstream, "commit", "-q", "-m", "next");
    const next = git(upstream, "rev-parse", "--short=12", "HEAD");
    const id = await spawnThread();
    await call(base(), "POST", `/threads/${id}/messages`, { text: sim({ chunks: 16, delayMs: 250 }, "slow") });
    await waitFor(async () => (await turnOf(id)).running);
    const pid = frontPid();

    const run = reload();
    await waitFor(async () => (await call(base(), "GET", "/drain")).body.armed, 10_000);
    const refused = await call(base(), "POST", "/spawn", {});
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.body).toMatchObject({ code: "draining", active: [id], owner: "reload" });

    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.map((l) => l.slice(0, 12))).toEqual(["reload: 1/5 ", "reload: 2/5 ", "reload: 3/5 ", "reload: 4/5 ", "reload: 5/5 "]);
    expect(lines[0]).toContain(`-> ${next}`);
    expect(lines[3]).not.toContain("waited 0s");
    expect(existsSync(join(checkout, "RELOADED"))).toBe(true);

    // The turn finished before the restart: nothing was lost to it.
    const kinds = (await events(base(), id)).map((e) => e.kind);
    expect(kinds).toContain("turn-ended");
    expect(kinds).not.toContain("turn-failed");

    const now = frontPid();
    expect(now).not.toBe(pid);
    expect(alive(now)).toBe(true);
    expect(front.proc.exitCode).toBe(0);
    const health = await call(base(), "GET", "/health");
    expect(health.body).toMatchObject({ ok: true, build: next });
    expect((await call(base(), "GET", "/drain")).body).toMatchObject({ armed: false, owner: null });
    expect((await call(base(), "POST", "/spawn", {})).status).toBe(201);
  });
});
