import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetPlaces } from "../../local-front/bindings/sandbox/registry.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim } from "../support/http.js";

/**
 * Two runtimes on one host, same user (docs/credentials.md, "Other runtimes on the host"):
 * a session of runtime A cannot read runtime B's data directory, accounts file or engine
 * state, at custom places or at the defaults, even one started with a HOME of its own. Everything lives under /var/tmp, not /tmp:
 * every sandbox has a private /tmp, which would hide it whatever the registry says. The
 * control is a file beside B's places, which the same session reads.
 */
const tag = Math.random().toString(36).slice(2);
const MARKERS = {
  readable: `readable-beside-${tag}`,
  bAccount: `sk-runtime-b-${tag}`,
  bData: `runtime-b-data-${tag}`,
  bEngine: `runtime-b-engine-${tag}`,
  cData: `runtime-c-data-${tag}`,
  dAccount: `sk-runtime-d-${tag}`,
  dData: `runtime-d-data-${tag}`,
};

const root = mkdtempSync("/var/tmp/agent-runtime-apart-");
/** The user's home for all three runtimes: C's default data directory is under it. */
const home = join(root, "home");
const b = { data: join(root, "b-data"), accounts: join(root, "b-accounts.json"), engine: join(root, "b-engine") };
const c = { data: join(home, ".service", "agents-host") };
/** D: the same user started with a HOME of its own, its data directory the default under it. */
const dHome = join(root, "d-home");
const d = { data: join(dHome, ".service", "agents-host"), accounts: join(root, "d-accounts.json") };
const readable = join(root, "readable.txt");
/** Where every runtime of this user records its places, whatever its HOME: the passwd home's. */
const registry = join(userInfo().homedir, ".service", "runtimes");

function placeSecrets(): void {
  mkdirSync(home);
  writeFileSync(readable, `${MARKERS.readable}\n`);
  mkdirSync(b.data);
  writeFileSync(join(b.data, "marker.txt"), MARKERS.bData);
  writeFileSync(b.accounts, JSON.stringify({ accounts: [{ id: "b-account", provider: "openai", apiKey: MARKERS.bAccount }] }));
  mkdirSync(b.engine);
  writeFileSync(join(b.engine, "marker.txt"), MARKERS.bEngine);
  mkdirSync(c.data, { recursive: true });
  writeFileSync(join(c.data, "marker.txt"), MARKERS.cData);
  mkdirSync(d.data, { recursive: true });
  writeFileSync(join(d.data, "marker.txt"), MARKERS.dData);
  writeFileSync(d.accounts, JSON.stringify({ accounts: [{ id: "d-account", provider: "openai", apiKey: MARKERS.dAccount }] }));
}

/** Reads the control file, then tries each of B's and C's places; `|| true` so that a refused read does not end the command. */
function probe(): string {
  const tries = [
    `cat ${readable}`,
    `cat ${b.accounts}`,
    `ls -A ${b.data}`,
    `cat ${join(b.data, "marker.txt")}`,
    `ls -A ${b.engine}`,
    `cat ${join(b.engine, "marker.txt")}`,
    `ls -A ${c.data}`,
    `cat ${join(c.data, "marker.txt")}`,
    `ls -A ${join(c.data, "engine")}`,
    `ls -A ${join(home, ".service", "runtimes")}`,
    `ls -A ${registry}`,
    `cat ${d.accounts}`,
    `ls -A ${d.data}`,
    `cat ${join(d.data, "marker.txt")}`,
  ];
  return tries.map((t) => `${t} || true`).join("; ");
}

async function runProbe(front: Front): Promise<string> {
  const { threadId } = (await call(front.url, "POST", "/spawn", { engine: "pi", model: "sim-1", permissions: "allow" })).body;
  const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: probe() } } }) });
  expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
  return (await events(front.url, threadId)).find((e) => e.kind === "tool-result")?.body.output ?? "";
}

function expectApart(result: string): void {
  // The control: a file beside B's places, read by the same command.
  expect(result).toContain(MARKERS.readable);
  for (const [name, secret] of Object.entries(MARKERS)) if (name !== "readable") expect(result, name).not.toContain(secret);
  // Every other line is a refusal: the hidden directories are empty or absent (no lock file, store or registry entry listed), their files unreadable.
  const shown = result.split("\n").filter((line) => line && !/^(cat|ls): |^exit code/.test(line));
  expect(shown).toEqual([MARKERS.readable]);
}

/** A turn of an engine that keeps a session, so that engine state is written where the front keeps it. */
async function engineTurn(front: Front, spec = { engine: "engine_a", model: "claude-sim" }): Promise<string> {
  const { threadId } = (await call(front.url, "POST", "/spawn", spec)).body;
  const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: "hello" });
  expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
  return threadId;
}

describe("runtimes on one host are apart", () => {
  let a: Front;
  let runtimeB: Front;
  let runtimeC: Front;
  let runtimeD: Front;
  beforeAll(async () => {
    placeSecrets();
    const sameUser = { HOME: home, SERVICE_SIMULATOR: "on" };
    // B: every place custom, the accounts file outside its data directory.
    runtimeB = await startFront({ dataDir: b.data, env: { ...sameUser, SERVICE_ACCOUNTS_FILE: b.accounts, SERVICE_ENGINE_STATE_DIR: b.engine } });
    // C: the defaults (~/.service/agents-host, its engine state unset).
    runtimeC = await startFront({ dataDir: c.data, env: { ...sameUser, SERVICE_AGENTS_DATA_DIR: "", SERVICE_ENGINE_STATE_DIR: "" } });
    // D: another HOME than A's (not in /etc/passwd), so A's HOME holds nothing of D's.
    runtimeD = await startFront({ dataDir: d.data, env: { HOME: dHome, SERVICE_SIMULATOR: "on", SERVICE_AGENTS_DATA_DIR: "", SERVICE_ENGINE_STATE_DIR: "", SERVICE_ACCOUNTS_FILE: d.accounts } });
    // A: a data directory of its own, its engine state unset.
    a = await startFront({ env: { ...sameUser, SERVICE_ENGINE_STATE_DIR: "" } });
  }, 120_000);
  afterAll(async () => {
    for (const front of [a, runtimeB, runtimeC, runtimeD]) await front?.stop();
    // Other files' sessions mask these runtimes' places: their entries go before the places
    // do, and a fence built just before that has a moment to be mounted.
    for (const dir of [a?.dataDir, b.data, c.data, d.data]) if (dir) forgetPlaces(dir);
    await new Promise((r) => setTimeout(r, 500));
    if (a) removeDir(a.dataDir);
    removeDir(root);
  });

  it("engine state defaults inside the data directory, the default one or another", async () => {
    expect(runtimeC.output()).toContain(`data=${c.data}`);
    for (const front of [a, runtimeC]) {
      const thread = await engineTurn(front);
      expect(existsSync(join(front.dataDir, "engine", "engine_a", "threads", `${thread}.json`))).toBe(true);
    }
    // Under ~/.service, which every sandbox hides whole, each engine's own home is still bound in for its thread.
    const codex = await engineTurn(runtimeC, { engine: "engine_b", model: "gpt-sim" });
    expect(existsSync(join(c.data, "engine", "engine_b", "threads", `${codex}.json`))).toBe(true);
    expect(existsSync(join(home, ".service", "engine"))).toBe(false);
  });

  it("an installation upgraded in place keeps its engine state at ~/.service/engine, and says so", async () => {
    const upgraded = join(root, "upgraded-home");
    mkdirSync(join(upgraded, ".service", "engine"), { recursive: true });
    const front = await startFront({ dataDir: join(upgraded, ".service", "agents-host"), env: { HOME: upgraded, SERVICE_SIMULATOR: "on", SERVICE_AGENTS_DATA_DIR: "", SERVICE_ENGINE_STATE_DIR: "" } });
    try {
      expect(front.output()).toContain(`engine state stays in ${join(upgraded, ".service", "engine")}, where an earlier build kept it`);
      const thread = await engineTurn(front);
      expect(existsSync(join(upgraded, ".service", "engine", "engine_a", "threads", `${thread}.json`))).toBe(true);
      expect(existsSync(join(front.dataDir, "engine"))).toBe(false);
    } finally {
      await front.stop();
    }
  });

  it("a session of A reads a file beside B's places, and not B's accounts file, data directory or engine state, nor C's under the default place", async () => {
    expectApart(await runProbe(a));
  });

  it("a session of A cannot read D's data directory or accounts file either, though D runs with another HOME", async () => {
    expect(runtimeD.output()).toContain(`data=${d.data}`);
    const result = await runProbe(a);
    expect(result).toContain(MARKERS.readable);
    for (const secret of [MARKERS.dAccount, MARKERS.dData]) expect(result).not.toContain(secret);
  });

  it("the registry names places only: no secret in it", () => {
    const entries = readdirSync(registry).map((name) => readFileSync(join(registry, name), "utf8"));
    expect(entries.some((e) => e.includes(b.accounts))).toBe(true);
    for (const entry of entries) expect(entry).not.toContain(MARKERS.bAccount);
  });

  it("a runtime that stopped stays hidden: its secrets are still on disk", async () => {
    await runtimeB.stop();
    expectApart(await runProbe(a));
  });
});
