import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim } from "../support/http.js";
import { descendants } from "../support/processes.js";

/**
 * Sessions cannot read the host's secrets (docs/credentials.md, "What a session can
 * reach"). Each marker below sits where a session must not reach it; each turn's command
 * tries every one of them and also reads a file of its own, so the log shows where the line is.
 */
const tag = Math.random().toString(36).slice(2);
const MARKERS = {
  account: `sk-sandbox-account-${tag}`,
  otherThread: `other-thread-session-${tag}`,
  frontEnv: `sk-sandbox-env-${tag}`,
};
/** What the front runs, which no session may change: its checkout, the node_modules it resolves from, Node's directory. */
const CHECKOUT = resolve(import.meta.dirname, "../..");
const NODE_MODULES = realpathSync(join(CHECKOUT, "node_modules"));
const NODE_BIN = dirname(realpathSync(process.execPath));
const RUNTIME = [CHECKOUT, NODE_MODULES, NODE_BIN];
/** The file a session tries to leave in each place; the old code's sessions could, so each is removed after the tests whatever they found. */
const PROBE = `.sandbox-probe-${tag}`;
const ENGINES = [
  { engine: "pi", model: "sim-1" },
  { engine: "engine_a", model: "claude-sim" },
  { engine: "engine_b", model: "gpt-sim" },
];

/** A data directory with an account whose key is a marker, and an engine state directory apart holding another thread's session. */
function secretPlaces(): { dataDir: string; stateDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-sandbox-"));
  const stateDir = mkdtempSync(join(tmpdir(), "agent-runtime-sandbox-state-"));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "canary", provider: "openai", apiKey: MARKERS.account }] }));
  for (const engine of ["engine_a", "engine_b"]) {
    mkdirSync(join(stateDir, engine, "homes", "thr_someone_else"), { recursive: true });
    writeFileSync(join(stateDir, engine, "homes", "thr_someone_else", "session.json"), MARKERS.otherThread);
  }
  return { dataDir, stateDir };
}

async function startWith(env: Record<string, string>): Promise<{ front: Front; stateDir: string }> {
  const { dataDir, stateDir } = secretPlaces();
  // The simulator answers every model call, accounts or not; the marker key is only ever read from the file.
  const front = await startFront({ dataDir, env: { SERVICE_SIMULATOR: "on", SERVICE_ENGINE_STATE_DIR: stateDir, OPENAI_API_KEY: MARKERS.frontEnv, ...env } });
  return { front, stateDir };
}

/** Reads its own file, then tries each secret; `|| true` so that a refused read is not the command's end. */
function probe(front: Front, stateDir: string, own: string): string {
  const tries = [
    join(front.dataDir, "accounts.json"),
    join(front.dataDir, "proxy", "placeholder.key"),
    join(stateDir, "engine_a", "homes", "thr_someone_else", "session.json"),
    join(stateDir, "engine_b", "homes", "thr_someone_else", "session.json"),
    `/proc/${front.proc.pid}/environ`,
  ];
  // The runtime's own API is on the host's loopback, with every thread's log and the access-token route.
  const api = `curl -s --noproxy '*' -m 5 ${front.url}/threads || echo runtime-api-unreachable`;
  return [`echo ${own} > own.txt`, "cat own.txt", ...tries.map((p) => `cat ${p} || true`), `ls ${front.dataDir} || true`, api].join("; ");
}

async function runProbe(front: Front, stateDir: string, spec: { engine: string; model: string }): Promise<{ log: string; result: string }> {
  const { threadId } = (await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow" })).body;
  const own = `own-file-of-${threadId}`;
  const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: probe(front, stateDir, own) } } }) });
  expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
  const logged = await events(front.url, threadId);
  const result = logged.find((e) => e.kind === "tool-result")?.body.output ?? "";
  // The line: its own file, in its own working directory (inside the data directory), is there.
  expect(result).toContain(own);
  return { log: JSON.stringify(logged), result };
}

/** A shell command's output in a new thread of `spec` working in `cwd`, its turn completed. */
async function shellIn(front: Front, spec: { engine: string; model: string }, cwd: string, command: string): Promise<string> {
  const spawned = await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow", cwd });
  expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
  const r = await call(front.url, "POST", `/threads/${spawned.body.threadId}/send`, { text: sim({ tool: { name: "shell", input: { command } } }) });
  expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
  return (await events(front.url, spawned.body.threadId)).find((e) => e.kind === "tool-result")?.body.output ?? "";
}

/** Writes a file of its own in its cwd, then tries to leave one in each place; each line says which happened. */
function writes(own: string, places: string[]): string {
  return [`(echo ${own} > own.txt && cat own.txt) || echo own-read-only`, ...places.map((p) => `(touch ${join(p, PROBE)} 2>/dev/null && echo "wrote ${p}") || echo "read-only ${p}"`)].join("; ");
}

function secretsOf(front: Front): string[] {
  return [...Object.values(MARKERS), readFileSync(join(front.dataDir, "proxy", "placeholder.key"), "utf8").trim()];
}

describe("sessions cannot read the host's secrets", () => {
  let front: Front;
  let stateDir: string;
  beforeAll(async () => {
    ({ front, stateDir } = await startWith({}));
  });
  afterAll(async () => {
    await front?.stop();
    removeDir(front.dataDir);
    removeDir(stateDir);
    for (const p of [...RUNTIME, dirname(CHECKOUT)]) rmSync(join(p, PROBE), { force: true });
  });

  it("says so on its start line", () => {
    expect(front.output()).toMatch(/listening on .* sandbox=bwrap/);
  });

  for (const spec of ENGINES) {
    it(`${spec.engine}: a tool command reads its own cwd, and not accounts.json, the placeholder key, other threads' engine state or the front's environment`, async () => {
      const { log, result } = await runProbe(front, stateDir, spec);
      expect(result).toMatch(/accounts\.json: No such file/);
      expect(result).toContain("runtime-api-unreachable");
      for (const secret of secretsOf(front)) expect(log).not.toContain(secret);
    });
  }

  it("pi's file tools see what its shell sees", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { permissions: "allow" })).body;
    const read = await call(front.url, "POST", `/threads/${threadId}/send`, {
      text: sim({ tool: { name: "read_file", input: { path: join(front.dataDir, "accounts.json") } } }),
    });
    expect(read.body.outcome).toBe("completed");
    // A symlink in its own cwd leads nowhere either: the file is not there inside the fence.
    await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: `ln -s ${join(front.dataDir, "accounts.json")} link` } } }) });
    await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "read_file", input: { path: "link" } } }) });
    await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "edit_file", input: { path: "link", oldText: "canary", newText: "x" } } }) });
    const written = await call(front.url, "POST", `/threads/${threadId}/send`, {
      text: sim({ tool: { name: "write_file", input: { path: join(front.dataDir, "accounts.json"), content: "{}" } } }),
    });
    expect(written.body.outcome).toBe("completed");
    const logged = await events(front.url, threadId);
    const results = logged.filter((e) => e.kind === "tool-result");
    expect(results.filter((e) => e.body.name === "read_file").every((e) => e.body.isError && /No such file/.test(e.body.output))).toBe(true);
    const log = JSON.stringify(logged);
    for (const secret of secretsOf(front)) expect(log).not.toContain(secret);
    // The write landed in the fence's empty stand-in, not in the data directory.
    expect(readFileSync(join(front.dataDir, "accounts.json"), "utf8")).toContain(MARKERS.account);
  });

  for (const spec of ENGINES) {
    it(`${spec.engine}: a session writes in its cwd beside the runtime, and not in the runtime's checkout, its node_modules or Node's directory`, async () => {
      const cwd = mkdtempSync(join(tmpdir(), "agent-runtime-beside-"));
      try {
        const out = await shellIn(front, spec, cwd, writes(`own-${spec.engine}`, RUNTIME));
        // The control: its own cwd takes the write.
        expect(out).toContain(`own-${spec.engine}`);
        expect(readFileSync(join(cwd, "own.txt"), "utf8")).toBe(`own-${spec.engine}\n`);
        for (const p of RUNTIME) expect(out).toContain(`read-only ${p}`);
        expect(out).not.toContain("wrote");
      } finally {
        removeDir(cwd);
      }
    });

    it(`${spec.engine}: a session whose cwd lies inside the runtime's checkout cannot write there either`, async () => {
      const cwd = mkdtempSync(join(CHECKOUT, ".sandbox-cwd-"));
      try {
        const out = await shellIn(front, spec, cwd, writes(`own-${spec.engine}`, [CHECKOUT, cwd]));
        expect(out).toContain("own-read-only");
        expect(out).toContain(`read-only ${CHECKOUT}`);
        expect(out).toContain(`read-only ${cwd}`);
        expect(existsSync(join(cwd, "own.txt"))).toBe(false);
      } finally {
        removeDir(cwd);
      }
    });
  }

  it("refuses a spawn, a fork and a delegation whose cwd is /, lies in the data directory, or holds the runtime, with 400 spawn-cwd-fenced", async () => {
    const before = (await call(front.url, "GET", "/threads?limit=200")).body.threads.length;
    for (const cwd of ["/", front.dataDir, join(front.dataDir, "scratch", "thr_x"), dirname(CHECKOUT), CHECKOUT, dirname(NODE_MODULES), dirname(NODE_BIN)]) {
      const r = await call(front.url, "POST", "/spawn", { permissions: "allow", cwd });
      expect([r.status, r.body.code], cwd).toEqual([400, "spawn-cwd-fenced"]);
    }
    expect((await call(front.url, "GET", "/threads?limit=200")).body.threads.length).toBe(before);
    const parent = (await call(front.url, "POST", "/spawn", { permissions: "allow" })).body.threadId;
    const atSeq = (await events(front.url, parent)).at(-1)!.seq;
    const fork = await call(front.url, "POST", `/threads/${parent}/fork`, { atSeq, cwd: "/" });
    expect([fork.status, fork.body.code]).toEqual([400, "spawn-cwd-fenced"]);
    const delegation = await call(front.url, "POST", `/threads/${parent}/operations`, { kind: "delegation", title: "x", prompt: "y", spec: { cwd: dirname(CHECKOUT) } });
    expect([delegation.status, delegation.body.code]).toEqual([400, "spawn-cwd-fenced"]);
  });

  it("refuses a cwd whose link leads into the data directory or to a directory holding the runtime: pi's tools, and engine_a's and engine_b's turns", async () => {
    const links = mkdtempSync(join(tmpdir(), "agent-runtime-links-"));
    try {
      symlinkSync(front.dataDir, join(links, "data"));
      symlinkSync(dirname(CHECKOUT), join(links, "above-runtime"));
      const cases = [
        { cwd: join(links, "data"), refusal: "inside the runtime's private data", tries: "cat accounts.json" },
        { cwd: join(links, "above-runtime"), refusal: "holds the runtime's own programs", tries: `touch ${join(CHECKOUT, PROBE)}; touch ${PROBE}` },
      ];
      for (const { cwd, refusal, tries } of cases) {
        // Written as a path outside both, the spawn passes; the sandbox reads where the link leads.
        const pi = await call(front.url, "POST", "/spawn", { permissions: "allow", cwd });
        expect(pi.status, cwd).toBe(201);
        await call(front.url, "POST", `/threads/${pi.body.threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: tries } } }) });
        const result = (await events(front.url, pi.body.threadId)).find((e) => e.kind === "tool-result")!.body;
        expect(result, cwd).toMatchObject({ isError: true, output: expect.stringContaining(refusal) });
        expect(JSON.stringify(await events(front.url, pi.body.threadId))).not.toContain(MARKERS.account);
        for (const spec of ENGINES.slice(1)) {
          const { threadId } = (await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow", cwd })).body;
          const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: tries } } }) });
          expect(r.body.failure, `${spec.engine} in ${cwd}`).toMatchObject({ class: "permission", error: expect.stringContaining(refusal) });
        }
      }
      expect(existsSync(join(CHECKOUT, PROBE))).toBe(false);
      expect(existsSync(join(dirname(CHECKOUT), PROBE))).toBe(false);
    } finally {
      removeDir(links);
    }
  });

  it("gives no process it starts the provider keys of its environment", () => {
    const lock = JSON.parse(readFileSync(join(front.dataDir, "front.pid"), "utf8")) as { workerd: { pid: number }[]; watchdog: number };
    const children = [...lock.workerd.map((w) => w.pid), lock.watchdog];
    expect(children).toHaveLength(3);
    // And nothing else under the front (esbuild's service, say).
    const all = new Set([...children, ...descendants(front.proc.pid!)]);
    for (const pid of all) {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      // The TypeScript loader's own transform service, started before any of the front's code (docs/credentials.md says so).
      if (command.includes("/tsx/node_modules/")) continue;
      expect(readFileSync(`/proc/${pid}/environ`, "latin1"), `pid ${pid}: ${command}`).not.toContain(MARKERS.frontEnv);
    }
    // The front itself was given it, so the check above looks where the key would be.
    expect(readFileSync(`/proc/${front.proc.pid}/environ`, "latin1")).toContain(MARKERS.frontEnv);
  });
});


describe("where the fence is the only thing in the way", () => {
  it("with SERVICE_SANDBOX=off (unsafe, documented so) the same command reads accounts.json", async () => {
    const { front, stateDir } = await startWith({ SERVICE_SANDBOX: "off" });
    try {
      expect(front.output()).toMatch(/sandbox=off/);
      const { result } = await runProbe(front, stateDir, ENGINES[0]!);
      expect(result).toContain(MARKERS.account);
      expect(result).toContain(MARKERS.otherThread);
      expect(result).toContain('"threads":[');
    } finally {
      await front.stop();
      removeDir(front.dataDir);
      removeDir(stateDir);
    }
  });
});

describe("without a working bubblewrap, nothing a session asks runs", () => {
  let front: Front;
  let stateDir: string;
  const fakeBin = mkdtempSync(join(tmpdir(), "agent-runtime-nobwrap-"));
  beforeAll(async () => {
    // A bwrap that fails as a broken install would.
    writeFileSync(join(fakeBin, "bwrap"), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
    chmodSync(join(fakeBin, "bwrap"), 0o755);
    ({ front, stateDir } = await startWith({ PATH: `${fakeBin}:${process.env.PATH}` }));
  });
  afterAll(async () => {
    await front?.stop();
    removeDir(front.dataDir);
    removeDir(stateDir);
    removeDir(fakeBin);
  });

  it("says so at start, with why and what to do, and in the engines list", async () => {
    expect(front.output()).toMatch(/sandbox=unavailable \(bubblewrap is installed but bwrap cannot make its namespaces here: bwrap: setting up uid map: Permission denied: allow unprivileged user namespaces/);
    const engines = (await call(front.url, "GET", "/accounts")).body.engines as { engine: string; available: boolean; reason: string | null }[];
    expect(engines.find((e) => e.engine === "engine_a")).toMatchObject({ available: false, reason: expect.stringContaining("SERVICE_SANDBOX=off") });
  });

  it("pi refuses every tool command with a failed tool result", async () => {
    const { threadId } = (await call(front.url, "POST", "/spawn", { permissions: "allow" })).body;
    const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: `cat ${join(front.dataDir, "accounts.json")}` } } }) });
    expect(r.body.outcome).toBe("completed");
    const result = (await events(front.url, threadId)).find((e) => e.kind === "tool-result")!.body;
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toContain("bwrap cannot make its namespaces here");
    expect(result.output).not.toContain(MARKERS.account);
  });

  it("engine_a's and engine_b's spawns are refused as engine-unavailable, as for a missing CLI, before any thread exists", async () => {
    const before = (await call(front.url, "GET", "/threads?limit=200")).body.threads.length;
    for (const engine of [ENGINES[1], ENGINES[2]]) {
      const r = await call(front.url, "POST", "/spawn", { ...engine, permissions: "allow" });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ code: "engine-unavailable", error: expect.stringContaining("bubblewrap") });
    }
    expect((await call(front.url, "GET", "/threads?limit=200")).body.threads.length).toBe(before);
  });
});
