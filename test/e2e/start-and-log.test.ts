import { existsSync, mkdtempSync, readdirSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { call } from "../support/http.js";
import { removeDir, startFront, type Front } from "../support/front.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "start-and-log-"));
  dirs.push(dir);
  return dir;
}

/** Processes holding a file under `dir` open (a workerd serving its stores would). */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      if (readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir))) found.push(Number(pid));
    } catch {
      // Gone, or not ours to look at.
    }
  }
  return found;
}

/** The front's exit and output, for a start that must fail. */
async function failedStart(env: Record<string, string>, dir: string): Promise<string> {
  const error = await startFront({ dataDir: dir, env }).then(
    (front) => (void front.stop(), new Error(`the front started: ${front.output()}`)),
    (err: Error) => err,
  );
  return error.message;
}

describe("starting", () => {
  it("on a port another program holds: one sentence, exit 2, nothing left running and no lock file", async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const port = (holder.address() as { port: number }).port;
    const dir = dataDir();
    try {
      const message = await failedStart({ SERVICE_AGENTS_PORT: String(port) }, dir);
      expect(message).toMatch(/^front exited 2:/);
      expect(message).toContain(`agent-runtime: port ${port} on 127.0.0.1 is in use by another program; stop it or set SERVICE_AGENTS_PORT`);
      expect(message).not.toMatch(/EADDRINUSE|\n\s+at /);
      expect(existsSync(join(dir, "front.pid"))).toBe(false);
      expect(processesUsing(dir)).toEqual([]);
    } finally {
      holder.close();
    }
  });

  it("stops cleanly on a SIGTERM sent the moment its start line appears, every time", async () => {
    // The signal handlers are in place before the line: a signal caught while the
    // front swapped Miniflare's for its own was once lost, and the front hung.
    for (let i = 0; i < 5; i++) {
      const front = await startFront();
      const code = await front.stop();
      removeDir(front.dataDir);
      expect(code, front.output()).toBe(0);
      expect(front.output()).toContain("stopped cleanly");
    }
    // Five starts: on a loaded two-core machine one takes ten seconds.
  }, 180_000);

  it("with a SERVICE_LOG it does not know: one sentence, exit 2", async () => {
    const message = await failedStart({ SERVICE_LOG: "loud" }, dataDir());
    expect(message).toMatch(/^front exited 2:/);
    expect(message).toContain('agent-runtime: SERVICE_LOG must be debug, info, warn, error or off, not "loud"');
    expect(message).not.toMatch(/\n\s+at /);
  });
});

const SECRET = `sk-start-and-log-${Math.random().toString(36).slice(2)}`;
const BODY = `a message body ${Math.random().toString(36).slice(2)}`;

/** Runs one turn that completes and one that fails, then stops the front; answers its output and the turns. */
async function twoTurnsThenStop(front: Front): Promise<{ output: string; thread: string; turns: string[] }> {
  const spawned = await call(front.url, "POST", "/spawn", { title: "logged" });
  const thread = spawned.body.threadId as string;
  const ok = await call(front.url, "POST", `/threads/${thread}/send`, { text: BODY });
  expect(ok.body.outcome).toBe("completed");
  const failed = await call(front.url, "POST", `/threads/${thread}/send`, { text: `@sim {"fail":"auth"}\n${BODY}` });
  expect(failed.body).toMatchObject({ outcome: "failed", failure: { class: "auth" } });
  // "exit" may come before the last output is read; "close" comes after it.
  const closed = new Promise((r) => front.proc.once("close", r));
  expect(await front.stop()).toBe(0);
  await closed;
  return { output: front.output(), thread, turns: [ok.body.turnId, failed.body.turnId] };
}

// The provider key makes an account; the simulator still answers every call, so the turns stay offline.
const withSecret = { OPENAI_API_KEY: SECRET, SERVICE_SIMULATOR: "on" };

describe("the front's log", () => {
  it("writes JSON lines with SERVICE_LOG_FORMAT=json: a line per turn and the shutdown, never a secret or a body", async () => {
    const front = await startFront({ dataDir: dataDir(), env: { ...withSecret, SERVICE_LOG_FORMAT: "json" } });
    const { output, thread, turns } = await twoTurnsThenStop(front);
    const lines = output
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const ended = lines.filter((l) => l.msg === "turn ended" || l.msg === "turn failed");
    expect(ended).toEqual([
      { ts: expect.any(String), level: "info", msg: "turn ended", thread, turn: turns[0], engine: "pi", model: "sim-1", outcome: "completed", class: null, durationMs: expect.any(Number) },
      { ts: expect.any(String), level: "warn", msg: "turn failed", thread, turn: turns[1], engine: "pi", model: "sim-1", outcome: "failed", class: "auth", durationMs: expect.any(Number) },
    ]);
    expect(lines.filter((l) => l.msg === "stopping" || l.msg === "stopped cleanly")).toEqual([
      { ts: expect.any(String), level: "info", msg: "stopping", signal: "SIGTERM" },
      { ts: expect.any(String), level: "info", msg: "stopped cleanly", signal: "SIGTERM", durationMs: expect.any(Number) },
    ]);
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain(BODY);
  });

  it("writes key=value text by default", async () => {
    const front = await startFront({ dataDir: dataDir(), env: withSecret });
    const { output, thread, turns } = await twoTurnsThenStop(front);
    expect(output).toContain(`agent-runtime: info turn ended thread=${thread} turn=${turns[0]} engine=pi model=sim-1 outcome=completed class=null durationMs=`);
    expect(output).toContain(`agent-runtime: warn turn failed thread=${thread} turn=${turns[1]} engine=pi model=sim-1 outcome=failed class=auth durationMs=`);
    expect(output).toMatch(/^agent-runtime: info stopped cleanly signal=SIGTERM durationMs=\d+$/m);
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain(BODY);
  });

  it("is silent with SERVICE_LOG=off: the start line only", async () => {
    const front = await startFront({ dataDir: dataDir(), env: { ...withSecret, SERVICE_LOG: "off" } });
    const { output } = await twoTurnsThenStop(front);
    expect(output.trim().split("\n")).toEqual([expect.stringMatching(/^agent-runtime listening on http:\/\/127\.0\.0\.1:\d+ /)]);
  });
});
