import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, identify } from "../../local-front/bindings/sandbox/identity.js";
import { PROJECT_DIR, frontCommand, removeDir, startFront, type Front } from "../support/front.js";
import { call, sim, waitFor } from "../support/http.js";

/** Processes whose command line holds `marker`. */
function withMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker) && alive(Number(entry))) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const others: ChildProcess[] = [];
/** A process of the test's own that looks exactly like the tool command: the runtime must leave it alone. */
function lookAlike(command: string): number {
  const child = spawn("bash", ["-c", command], { detached: true, stdio: "ignore" });
  others.push(child);
  return child.pid!;
}
const dirs: string[] = [];
afterAll(() => {
  for (const c of others)
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {
      // gone already
    }
  for (const d of dirs) removeDir(d);
});

interface LockFile {
  front: number;
  workerd: { pid: number; start: string }[];
  watchdog: number;
}
const lockOf = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, "front.pid"), "utf8")) as LockFile;

/** Starts a turn whose tool command never ends by itself, and waits until it runs (engine_a's Bash refuses a plain long `sleep`). */
async function sleepingTool(front: Front, spec: Record<string, unknown>, marker: string, own: number): Promise<{ threadId: string; tool: number[] }> {
  const { threadId } = (await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow" })).body;
  await call(front.url, "POST", `/threads/${threadId}/messages`, { text: sim({ tool: { name: "shell", input: { command: `tail -f /dev/null; echo ${marker}` } } }) });
  const tool = await waitFor(async () => {
    const found = withMarker(marker).filter((p) => p !== own);
    return found.length ? found : null;
  }, 60_000);
  return { threadId, tool };
}

const CASES = [
  { engine: "pi", model: "sim-1", sandbox: "on" },
  { engine: "pi", model: "sim-1", sandbox: "off" },
  { engine: "engine_a", model: "claude-sim", sandbox: "on" },
  { engine: "engine_a", model: "claude-sim", sandbox: "off" },
];

describe("what the runtime starts, it stops; nothing else", () => {
  for (const c of CASES)
    it(`${c.engine} (sandbox ${c.sandbox}): a tool command running at a kill -9 of the front and its watchdog is gone after the restart; a look-alike is left alone`, async () => {
      const marker = `tool-proc-${c.engine}-${c.sandbox}-${Math.random().toString(36).slice(2)}`;
      const own = lookAlike(`tail -f /dev/null; echo ${marker}`);
      const env = { SERVICE_SANDBOX: c.sandbox };
      const front = await startFront({ env });
      dirs.push(front.dataDir);
      const { threadId, tool } = await sleepingTool(front, { engine: c.engine, model: c.model }, marker, own);
      // The watchdog goes first, so only the next boot can stop what this one started.
      process.kill(lockOf(front.dataDir).watchdog, "SIGKILL");
      await front.kill9();
      const again = await startFront({ dataDir: front.dataDir, env });
      try {
        await waitFor(async () => tool.every((p) => !alive(p)));
        expect(withMarker(marker)).toEqual([own]);
        // The boot sweep settles the lost turn; the front answers signals once it has.
        await waitFor(async () => (await call(again.url, "GET", `/threads/${threadId}/turn`)).body.running === false, 60_000);
      } finally {
        await again.stop();
      }
    });

  it("the watchdog stops workerd and the tool commands of a front that died unreaped (a zombie), with no restart", async () => {
    const marker = `tool-proc-zombie-${Math.random().toString(36).slice(2)}`;
    const own = lookAlike(`tail -f /dev/null; echo ${marker}`);
    const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-zombie-"));
    dirs.push(dataDir);
    // The front's parent never reaps it: once killed, the front stays a zombie, which `kill -0` calls alive.
    const command = [process.execPath, ...(await frontCommand())].map((a) => `"${a}"`).join(" ");
    const parent = spawn("sh", ["-c", `${command} & exec sleep 3600`], {
      cwd: PROJECT_DIR,
      env: { ...process.env, SERVICE_AGENTS_PORT: "0", SERVICE_AGENTS_DATA_DIR: dataDir, SERVICE_ENGINE_STATE_DIR: join(dataDir, "engine"), SERVICE_KEEPER_PAUSE_GB: "0", SERVICE_KEEPER_RESUME_GB: "0", SERVICE_SANDBOX: "off" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    others.push(parent);
    let out = "";
    parent.stdout!.on("data", (d: Buffer) => (out += d));
    parent.stderr!.on("data", (d: Buffer) => (out += d));
    const url = await waitFor(async () => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000);
    const lock = lockOf(dataDir);
    const { tool } = await sleepingTool({ url } as Front, { engine: "pi", model: "sim-1" }, marker, own);
    process.kill(lock.front, "SIGKILL");
    await waitFor(async () => readFileSync(`/proc/${lock.front}/stat`, "utf8").includes(") Z "));
    await waitFor(async () => [...tool, ...lock.workerd.map((w) => w.pid)].every((p) => !alive(p)), 30_000);
    expect(withMarker(marker)).toEqual([own]);
  });

  it("never kills a process that only has the pid of one it recorded", async () => {
    const marker = `tool-proc-reuse-${Math.random().toString(36).slice(2)}`;
    const own = lookAlike(`tail -f /dev/null; echo ${marker}`);
    const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-reuse-"));
    dirs.push(dataDir);
    const start = identify(own)!.start;
    // A previous boot's records naming this pid, each with another start time: the pid was given to another process since.
    const stale = { pid: own, start: String(Number(start) - 1) };
    writeFileSync(join(dataDir, "front.pid"), JSON.stringify({ front: 999_999_999, workerd: [stale] }));
    writeFileSync(join(dataDir, "started.json"), JSON.stringify({ tag: "an-old-boot", processes: [stale] }));
    const front = await startFront({ dataDir });
    try {
      expect(alive(own)).toBe(true);
    } finally {
      await front.stop();
    }
    // The same records with the right start time: the process is stopped.
    writeFileSync(join(dataDir, "started.json"), JSON.stringify({ tag: "an-old-boot", processes: [{ pid: own, start }] }));
    const next = await startFront({ dataDir });
    try {
      expect(alive(own)).toBe(false);
    } finally {
      await next.stop();
    }
  });
});
