import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_DIR, removeDir } from "../support/front.js";
import { call } from "../support/http.js";
import { descendants } from "../support/processes.js";

const MARKER = "sk-launcher-marker-0123456789";
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-launcher-"));
afterAll(() => removeDir(dataDir));

describe("npm start's launcher", () => {
  it("hands the front its environment on a pipe: the front reads the key, and no process under it holds it", async () => {
    const launcher = spawn(process.execPath, ["local-front/start.mjs"], {
      cwd: PROJECT_DIR,
      env: {
        ...process.env,
        SERVICE_AGENTS_PORT: "0",
        SERVICE_AGENTS_DATA_DIR: dataDir,
        SERVICE_ENGINE_STATE_DIR: join(dataDir, "engine"),
        SERVICE_KEEPER_PAUSE_GB: "0",
        SERVICE_KEEPER_RESUME_GB: "0",
        OPENAI_API_KEY: MARKER,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    launcher.stdout!.on("data", (d: Buffer) => (out += d));
    launcher.stderr!.on("data", (d: Buffer) => (out += d));
    const exited = new Promise<number | null>((r) => launcher.once("exit", (code) => r(code)));
    const url = await new Promise<string>((resolve, reject) => {
      launcher.stdout!.on("data", () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`the launcher exited ${code}:\n${out}`)));
    });
    // The key reached the configuration: it is an account of its own.
    const accounts = await call(url, "GET", "/accounts");
    expect(JSON.stringify(accounts.body)).toContain("env-openai");
    const all = descendants(launcher.pid!);
    // What there is to look at: the front and its workerd processes, at least.
    expect(all.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")).length).toBeGreaterThanOrEqual(2);
    for (const pid of all) {
      let environ: string;
      try {
        environ = readFileSync(`/proc/${pid}/environ`, "latin1");
      } catch {
        continue;
      }
      expect(environ, `pid ${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8")}`).not.toContain(MARKER);
    }
    expect(out).not.toContain(MARKER);
    launcher.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain("stopped cleanly");
  });
});
