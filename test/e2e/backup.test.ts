import { spawn as spawnChild } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Manifest } from "../../local-front/backup/files.js";
import { select } from "../../local-front/backup/sqlite.js";
import { PROJECT_DIR, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, type LoggedEvent } from "../support/http.js";

const tmp = mkdtempSync(join(tmpdir(), "agent-runtime-backup-"));
/** engine_a files its sessions under the working directory's path: one that outlives the data directory. */
const work = join(tmp, "work");
const backupDir = join(tmp, "backup");
const restoredDir = join(tmp, "restored");
let front: Front;
let restored: Front | null = null;

beforeAll(async () => {
  mkdirSync(work);
  front = await startFront();
});
afterAll(async () => {
  await front?.stop();
  await restored?.stop();
  removeDir(front.dataDir);
  removeDir(tmp);
});

/** `npm run <script> -- ...args` as an operator runs it, with the front's variables (its engine state at the default, `<data dir>/engine`). */
function npmRun(script: "backup" | "restore", args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawnChild("npm", ["run", "-s", script, "--", ...args], {
    cwd: PROJECT_DIR,
    env: { ...process.env, SERVICE_AGENTS_DATA_DIR: front.dataDir, SERVICE_ENGINE_STATE_DIR: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d));
  child.stderr.on("data", (d: Buffer) => (err += d));
  // npm's own warnings about the machine's npmrc are not the command's.
  return new Promise((r) => child.once("exit", (code) => r({ code, out, err: err.split("\n").filter((l) => l && !l.startsWith("npm warn")).join("\n") })));
}

async function spawn(base: string, spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

/** Each thread store in the backup: its id and its log as the copy holds it. */
function backedUpLogs(dir: string): Map<string, { seq: number; kind: string; ts: string; blob: string | null }[]> {
  const logs = new Map<string, { seq: number; kind: string; ts: string; blob: string | null }[]>();
  // Every shard's stores: `do/` and `do-1/` (docs/decisions.md, "Two workerd processes").
  const stores = readdirSync(join(dir, "data"))
    .filter((d) => /^do(-\d+)?$/.test(d))
    .flatMap((d) => {
      const ns = join(dir, "data", d, "agent-runtime-Thread");
      return existsSync(ns) ? readdirSync(ns).filter((n) => n !== "metadata.sqlite" && n.endsWith(".sqlite")).map((n) => join(ns, n)) : [];
    });
  for (const path of stores) {
    const state = JSON.parse(select<{ state: string }>(path, "SELECT state FROM thread")[0]?.state ?? "null") as { id: string };
    logs.set(state.id, select(path, "SELECT seq, kind, ts, blob FROM events ORDER BY seq"));
  }
  return logs;
}

const seqs = (log: { seq: number }[]) => log.map((e) => e.seq);
const gapless = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("npm run backup / npm run restore", () => {
  const big = "large body ".repeat(8000); // ~88 KB: over the 64 KiB blob threshold
  const ids: Record<"large" | "tool" | "engineA" | "writer" | "quiet", string> = { large: "", tool: "", engineA: "", writer: "", quiet: "" };
  let manifest: Manifest;
  let original: Map<string, LoggedEvent[]>;

  it("backs up every store, the blobs and the engine state while a writer keeps appending", { timeout: 180_000 }, async () => {
    const base = front.url;
    ids.large = await spawn(base);
    const large = await call(base, "POST", `/threads/${ids.large}/send`, { text: big });
    expect(large.body).toMatchObject({ outcome: "completed" });
    ids.tool = await spawn(base, { permissions: "allow" });
    const tool = await call(base, "POST", `/threads/${ids.tool}/send`, {
      text: sim({ tool: { name: "shell", input: { command: "head -c 100000 /dev/zero | tr '\\0' a" } } }),
    });
    expect(tool.body).toMatchObject({ outcome: "completed" });
    ids.engineA = await spawn(base, { model: "claude-sim", cwd: work });
    const first = await call(base, "POST", `/threads/${ids.engineA}/send`, { text: "hello" });
    expect(first.body).toMatchObject({ outcome: "completed", reply: { text: "echo: hello" } });
    ids.quiet = await spawn(base);
    for (const text of ["one", "two", "three"]) expect((await call(base, "POST", `/threads/${ids.quiet}/messages`, { text, hold: true })).status).toBeLessThan(300);
    ids.writer = await spawn(base);

    // Held messages: each an append, none a turn, as fast as the runtime takes them. Every
    // tenth repeats the large body: stored again, it moves to a new file in the blob store.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const r = await call(base, "POST", `/threads/${ids.writer}/messages`, { text: written % 10 === 9 ? big : `w-${written}`, hold: true });
        expect(r.status).toBeLessThan(300);
        written++;
      }
    })();
    while (written < 20) await new Promise((r) => setTimeout(r, 10));
    const before = written;
    const run = await npmRun("backup", [backupDir]);
    const after = written;
    writing = false;
    await writer;
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^backup: .* \d+ stores, \d+ blobs/m);
    expect(after).toBeGreaterThan(before); // the runtime kept serving appends throughout

    original = new Map();
    for (const id of Object.values(ids)) original.set(id, await events(base, id));

    manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ format: "agent-runtime-backup/1", engineState: true, scratch: false, source: { dataDir: front.dataDir } });
    expect(manifest.build).toMatch(/\S/);
    const stores = manifest.files.filter((f) => f.kind === "store");
    for (const ns of ["Catalog", "Host", "Thread", "Workspace"]) expect(stores.some((f) => f.path.startsWith(`data/do/agent-runtime-${ns}/`))).toBe(true);
    expect(stores.some((f) => f.path.startsWith("data/blobs/"))).toBe(true);
    for (const s of stores) {
      expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(join(backupDir, s.path)).size).toBe(s.bytes);
    }
    expect(manifest.files.some((f) => /-(wal|shm)$/.test(f.path) || f.path === "data/front.pid")).toBe(false);
    expect(manifest.files.filter((f) => f.kind === "blob").length).toBeGreaterThanOrEqual(3);
    expect(manifest.files.map((f) => f.path)).toContain(`engine/engine_a/threads/${ids.engineA}.json`);
    // Secrets stay owner-only in the backup, and the backup itself is.
    for (const secret of ["data/proxy/ca.pem", "data/proxy/placeholder.key"]) {
      expect(manifest.files.find((f) => f.path === secret)?.mode).toBe("0600");
      expect(statSync(join(backupDir, secret)).mode & 0o777).toBe(0o600);
    }
    expect(statSync(join(backupDir, "manifest.json")).mode & 0o777).toBe(0o600);
    expect(statSync(backupDir).mode & 0o777).toBe(0o700);

    // Each store copy is one commit's state: every log in it is gapless, and a prefix of the original.
    const logs = backedUpLogs(backupDir);
    for (const id of Object.values(ids)) {
      const log = logs.get(id)!;
      expect(seqs(log)).toEqual(gapless(log.length));
      expect(log).toEqual(original.get(id)!.slice(0, log.length).map((e) => ({ seq: e.seq, kind: e.kind, ts: (e as any).ts, blob: e.blob?.sha256 ?? null })));
    }
    const writerLog = logs.get(ids.writer)!;
    // The copy caught the writer mid-stream: after the backup began, before the writer stopped.
    expect(writerLog.length).toBeGreaterThan(1 + before);
    expect(writerLog.length).toBeLessThan(original.get(ids.writer)!.length);
  });

  it("restores into a fresh data directory, where every thread reads back whole", { timeout: 180_000 }, async () => {
    // No engine state named: it goes into the restored data directory, where a front on it looks.
    const run = await npmRun("restore", [backupDir, restoredDir]);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^restore: .* into .*restored/m);
    expect(existsSync(join(restoredDir, "front.pid"))).toBe(false);
    expect(statSync(join(restoredDir, "proxy", "ca.pem")).mode & 0o777).toBe(0o600);
    restored = await startFront({ dataDir: restoredDir, env: { SERVICE_ENGINE_STATE_DIR: "" } });
    const base = restored.url;

    const logs = backedUpLogs(backupDir);
    const listed = (await call(base, "GET", "/threads?limit=100")).body.threads.map((t: { id: string }) => t.id);
    expect(new Set(listed)).toEqual(new Set(logs.keys()));
    for (const id of Object.values(ids)) expect(listed).toContain(id);
    for (const [id, log] of logs) {
      const back = await events(base, id);
      // Every event the backup holds, in order, with no gap; nothing was lost in between.
      expect(seqs(back).slice(0, log.length)).toEqual(gapless(log.length));
      expect(back.slice(0, log.length)).toEqual(original.get(id)!.slice(0, log.length));
      if (id !== ids.writer) expect(back).toEqual(original.get(id));
    }

    // The large bodies come back whole from the restored blob store.
    const message = (await events(base, ids.large)).find((e) => e.kind === "message")!;
    expect(message.blob?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(message.body.text).toBe(big);
    const result = (await events(base, ids.tool)).find((e) => e.kind === "tool-result")!;
    expect(result.blob?.sha256).toMatch(/^[0-9a-f]{64}$/);
    const served = await call(base, "GET", `/threads/${ids.tool}/tool-results/${result.seq}`);
    expect(served.status).toBe(200);
    expect(served.body).toEqual((await call(front.url, "GET", `/threads/${ids.tool}/tool-results/${result.seq}`)).body);
    expect(JSON.stringify(served.body)).toContain("a".repeat(100_000));

    // The engine state came back: the next engine_a turn resumes the session the backup holds.
    const session = `engine/engine_a/threads/${ids.engineA}.json`;
    expect(readFileSync(join(restoredDir, session), "utf8")).toBe(readFileSync(join(front.dataDir, session), "utf8"));
    const again = await call(base, "POST", `/threads/${ids.engineA}/send`, { text: "again" });
    expect(again.body).toMatchObject({ outcome: "completed", reply: { text: "echo: again" } });
    const requests = ((await (await fetch(`${restored.simulatorUrl}/_sim/requests`)).json()) as { requests: { path: string; body: any }[] }).requests;
    const last = requests.filter((r) => r.path.startsWith("/v1/messages")).at(-1)!;
    expect(JSON.stringify(last.body.messages)).toMatch(/hello.*echo: hello.*again/s);
  });

  it("refuses a non-empty target, a missing data directory, a data directory in use, and an engine state directory it would overwrite", { timeout: 180_000 }, async () => {
    const oneLine = (r: { code: number | null; err: string }, pattern: RegExp) => {
      expect(r.code).toBe(2);
      expect(r.err).toMatch(pattern);
      expect(r.err.split("\n")).toHaveLength(1);
    };
    const manifestBefore = readFileSync(join(backupDir, "manifest.json"), "utf8");
    oneLine(await npmRun("backup", [backupDir]), /^backup: .*backup exists and is not an empty directory$/);
    expect(readFileSync(join(backupDir, "manifest.json"), "utf8")).toBe(manifestBefore);
    oneLine(await npmRun("backup", [join(tmp, "never")], { SERVICE_AGENTS_DATA_DIR: join(tmp, "no-such-data") }), /^backup: data directory .*no-such-data does not exist$/);
    expect(existsSync(join(tmp, "never"))).toBe(false);

    // The restored front still serves its data directory.
    oneLine(await npmRun("restore", [backupDir, restoredDir], { SERVICE_ENGINE_STATE_DIR: join(tmp, "unused-engine") }), /^restore: data directory .* is in use by a running front \(pid \d+\)/);
    const occupied = join(tmp, "occupied");
    mkdirSync(occupied);
    writeFileSync(join(occupied, "keep.txt"), "mine");
    oneLine(await npmRun("restore", [backupDir, occupied]), /^restore: data directory .*occupied is not empty/);

    const engine = join(tmp, "engine-in-use");
    mkdirSync(engine);
    writeFileSync(join(engine, "old.json"), "{}");
    const target = join(tmp, "restored-again");
    oneLine(await npmRun("restore", [backupDir, target], { SERVICE_ENGINE_STATE_DIR: engine }), /^restore: engine state directory .* is not empty; --force/);
    expect(existsSync(target)).toBe(false);
    const forced = await npmRun("restore", [backupDir, target, "--force", "--engine-state", engine]);
    expect(forced.code).toBe(0);
    const aside = readdirSync(tmp).find((n) => n.startsWith("engine-in-use.before-restore-"))!;
    expect(readFileSync(join(tmp, aside, "old.json"), "utf8")).toBe("{}");
    expect(existsSync(join(engine, "engine_a", "threads", `${ids.engineA}.json`))).toBe(true);
  });
});
