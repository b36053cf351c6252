import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { RuntimeClient } from "../../client/index.js";
import { FRONT_FLAGS, frontBundle } from "../../local-front/front-bundle.mjs";
import { checkAnswersOf, stopCheckingAnswersOf } from "./answer-check.js";

const projectDir = resolve(import.meta.dirname, "../..");

export interface Front {
  url: string;
  /** The provider simulator the front started (null when it runs with real providers). */
  simulatorUrl: string | null;
  dataDir: string;
  client: RuntimeClient;
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

/** `npm start`'s command for the front of `dir` (this checkout by default): Node on its bundle, built if its sources changed. */
export async function frontCommand(dir = projectDir): Promise<string[]> {
  return [...FRONT_FLAGS, await frontBundle(dir)];
}

/**
 * Starts the real front (`npm start`'s command) on an ephemeral port, and waits for its start line.
 * `projectDir`: a checkout other than this one (the reload script's test runs one of its own).
 */
export async function startFront(options: { dataDir?: string; env?: Record<string, string>; projectDir?: string } = {}): Promise<Front> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agent-runtime-e2e-"));
  const cwd = options.projectDir ?? projectDir;
  const proc = spawn(process.execPath, await frontCommand(cwd), {
    cwd,
    // Engine resume state beside the data, so a test never touches ~/.service/engine.
    // The disk keeper off unless a test turns it on: a test machine's free space is not the test's business.
    env: {
      ...process.env,
      SERVICE_AGENTS_PORT: "0",
      SERVICE_AGENTS_DATA_DIR: dataDir,
      SERVICE_ENGINE_STATE_DIR: join(dataDir, "engine"),
      SERVICE_KEEPER_PAUSE_GB: "0",
      SERVICE_KEEPER_RESUME_GB: "0",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d));
  proc.stderr!.on("data", (d: Buffer) => (out += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`front did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) (clearTimeout(timer), resolveUrl(m[1]!));
    };
    proc.stdout!.on("data", check);
    proc.once("exit", (code) => (clearTimeout(timer), reject(new Error(`front exited ${code}:\n${out}`))));
  });
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => (stopCheckingAnswersOf(url), r(code))));
  // Another checkout serves its own contract, not the one this checkout documents.
  if (!options.projectDir) checkAnswersOf(url);
  return {
    url,
    simulatorUrl: /simulator=(http:\/\/\S+)/.exec(out)?.[1] ?? null,
    dataDir,
    client: new RuntimeClient({ baseUrl: url, pollMs: 200 }),
    proc,
    output: () => out,
    async stop() {
      proc.kill("SIGTERM");
      return exited;
    },
    async kill9() {
      proc.kill("SIGKILL");
      await exited;
    },
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export const PROJECT_DIR = projectDir;

/** For a front that must keep its port across a restart. */
/**
 * A loopback port for a listener a test must name before it starts (the reload script's
 * front, a provider upstream). Drawn below the kernel's ephemeral range (32768 and up),
 * so the many servers the tests start on port 0 cannot take it between this check and
 * its listener's bind.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const free = await new Promise<boolean>((r) => {
      server.once("error", () => r(false));
      server.listen(port, "127.0.0.1", () => r(true));
    });
    if (free) {
      await new Promise((r) => server.close(r));
      return port;
    }
  }
}
