import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";

/**
 * `npm ci && npm start` on a fresh machine (docs/operating.md, "The sandbox at start"): the
 * front installs a missing bubblewrap itself, and where it cannot, the start line, /health,
 * pi's tool results and engine_a's and engine_b's spawns all say why and what to run.
 * The machine's own bubblewrap stays (other tests need it): each front below gets a PATH
 * of links to every program on this one's, without `bwrap` (and without `apt-get`, or with
 * a stand-in for it), which is what the front sees on a machine without the package. The
 * links live outside /tmp, which every sandbox gets empty: bwrap's first trial finds `true` through them.
 */
const LINKS_DIR = "/var/tmp";
const REAL_BWRAP = execFileSync("sh", ["-c", "command -v bwrap"]).toString().trim();

function pathWithout(dir: string, left: string[]): string {
  for (const from of (process.env.PATH ?? "").split(delimiter).reverse()) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (left.includes(name)) continue;
      try {
        symlinkSync(join(from, name), join(dir, name));
      } catch {
        // a program of that name from an earlier PATH entry is there already
      }
    }
  }
  return dir;
}

/** Starts a front with the simulator on PATH `bin`, and `env` on top. */
function startOn(bin: string, env: Record<string, string>): Promise<Front> {
  return startFront({ env: { SERVICE_SIMULATOR: "on", PATH: bin, ...env } });
}

async function healthOf(front: Front): Promise<{ ok: boolean; sandbox: Record<string, string>; engines: { engine: string; available: boolean; reason: string | null }[] }> {
  const r = await call(front.url, "GET", "/health");
  expect(r.status).toBe(200);
  return r.body;
}

describe("where bubblewrap is missing and installing it is off", () => {
  let front: Front;
  const bin = mkdtempSync(join(LINKS_DIR, "agent-runtime-nobwrap-bin-"));
  const reason = "bubblewrap is not installed and SERVICE_SANDBOX_INSTALL=off forbids installing it";
  const remedy = "run 'apt-get install bubblewrap' (or unset SERVICE_SANDBOX_INSTALL), then restart the runtime";
  beforeAll(async () => {
    front = await startOn(pathWithout(bin, ["bwrap"]), { SERVICE_SANDBOX_INSTALL: "off" });
  });
  afterAll(async () => {
    await front?.stop();
    removeDir(front.dataDir);
    removeDir(bin);
  });

  it("says why and what to run on its start line, and serves", () => {
    const line = front.output().split("\n").find((l) => l.includes("listening on"))!;
    expect(line).toContain(`sandbox=unavailable (${reason}: ${remedy})`);
    expect(front.output()).not.toContain("installing bubblewrap");
  });

  it("/health reports the sandbox with its reason and remedy, and which engines can run", async () => {
    const health = await healthOf(front);
    expect(health.ok).toBe(true);
    expect(health.sandbox).toEqual({ state: "unavailable", reason, remedy });
    expect(health.engines.find((e) => e.engine === "pi")).toEqual({ engine: "pi", available: true, reason: null });
    for (const engine of ["engine_a", "engine_b"])
      expect(health.engines.find((e) => e.engine === engine)).toMatchObject({ available: false, reason: expect.stringContaining(`${reason}: ${remedy}`) });
  });

  it("pi: an approved tool command is a failed tool result that says why, never a success", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { permissions: "ask" })).body;
    await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool: { name: "shell", input: { command: "uname -a" } } }) });
    const approvalId = await waitFor(async () => (await call(front.url, "GET", `/threads/${threadId}/turn`)).body.waitingOn.approvals[0]);
    expect((await call(front.url, "POST", `/threads/${threadId}/approvals/${approvalId}`, { decision: "allow" })).status).toBe(200);
    const result = await waitFor(async () => (await events(front.url, threadId)).find((e) => e.kind === "tool-result")?.body);
    expect(result).toMatchObject({ name: "shell", isError: true, output: expect.stringContaining(`${reason}: ${remedy}`) });
    expect(result.output).not.toMatch(/Linux/);
  });

  it("engine_a's and engine_b's spawns are refused as engine-unavailable, saying why and what to run", async () => {
    for (const spec of [
      { engine: "engine_a", model: "claude-sim" },
      { engine: "engine_b", model: "gpt-sim" },
    ]) {
      const r = await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow" });
      expect(r.status, spec.engine).toBe(503);
      expect(r.body).toMatchObject({ code: "engine-unavailable", error: expect.stringContaining(`${reason}: ${remedy}`) });
    }
  });
});

describe("where bubblewrap is missing and the machine has no apt-get", () => {
  it("says so, with what to do instead, on the start line and /health", async () => {
    const bin = mkdtempSync(join(LINKS_DIR, "agent-runtime-noapt-bin-"));
    const front = await startOn(pathWithout(bin, ["bwrap", "apt-get"]), {});
    try {
      const reason = "bubblewrap is not installed and this machine has no apt-get to install it with";
      expect(front.output()).toContain(`sandbox=unavailable (${reason}: install bubblewrap with this system's package manager, then restart the runtime)`);
      expect((await healthOf(front)).sandbox).toMatchObject({ state: "unavailable", reason });
    } finally {
      await front.stop();
      removeDir(front.dataDir);
      removeDir(bin);
    }
  });
});

describe("where bubblewrap is missing and apt-get can install it", () => {
  it("installs it, says so before the start line, and starts with sandbox=bwrap", async () => {
    const bin = mkdtempSync(join(LINKS_DIR, "agent-runtime-apt-bin-"));
    const calls = join(bin, "apt-get.calls");
    pathWithout(bin, ["bwrap", "apt-get"]);
    // apt-get as far as this machine can tell: `install bubblewrap` puts bwrap on PATH.
    writeFileSync(
      join(bin, "apt-get"),
      `#!/bin/sh\necho "$*" >> ${calls}\ncase "$*" in *install*bubblewrap*) ln -s ${REAL_BWRAP} ${join(bin, "bwrap")};; esac\n`,
    );
    chmodSync(join(bin, "apt-get"), 0o755);
    const front = await startOn(bin, {});
    try {
      const out = front.output();
      const said = out.indexOf("installing bubblewrap (the session sandbox) from Debian's packages: apt-get install bubblewrap");
      expect(said).toBeGreaterThanOrEqual(0);
      expect(said).toBeLessThan(out.indexOf("listening on"));
      expect(out).toMatch(/listening on .* sandbox=bwrap\n/);
      expect(readFileSync(calls, "utf8")).toBe("update -qq\ninstall -y -qq --no-install-recommends bubblewrap\n");
      expect((await healthOf(front)).sandbox).toEqual({ state: "bwrap" });
    } finally {
      await front.stop();
      removeDir(front.dataDir);
      removeDir(bin);
    }
  });
});

describe("the control: a machine with bubblewrap", () => {
  let front: Front;
  beforeAll(async () => {
    front = await startFront({ env: { SERVICE_SIMULATOR: "on" } });
  });
  afterAll(async () => {
    await front?.stop();
    removeDir(front.dataDir);
  });

  it("installs nothing, starts with sandbox=bwrap, and /health has the sandbox and all three engines", async () => {
    expect(front.output()).not.toContain("installing");
    expect(front.output()).toMatch(/listening on .* sandbox=bwrap\n/);
    const health = await healthOf(front);
    expect(health).toMatchObject({ ok: true, sandbox: { state: "bwrap" } });
    expect(health.engines).toEqual(["pi", "engine_a", "engine_b"].map((engine) => ({ engine, available: true, reason: null })));
    // And the client library reads it through the contract's schema.
    expect((await front.client.health()).sandbox.state).toBe("bwrap");
  });

  it("pi: the same approved command runs and succeeds", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { permissions: "ask" })).body;
    await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool: { name: "shell", input: { command: "uname -a" } } }) });
    const approvalId = await waitFor(async () => (await call(front.url, "GET", `/threads/${threadId}/turn`)).body.waitingOn.approvals[0]);
    await call(front.url, "POST", `/threads/${threadId}/approvals/${approvalId}`, { decision: "allow" });
    const result = await waitFor(async () => (await events(front.url, threadId)).find((e) => e.kind === "tool-result")?.body);
    expect(result).toMatchObject({ name: "shell", isError: false, output: expect.stringContaining("Linux") });
  });
});
