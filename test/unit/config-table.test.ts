import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFrontConfig } from "../../local-front/process/config.js";
import { readConfig, SETTINGS } from "../../src/platform/config.js";

const root = resolve(import.meta.dirname, "../..");
const settings = Object.values(SETTINGS);
const operatorSettings = settings.filter((s) => s.source === "operator");
const dataDir = mkdtempSync(join(tmpdir(), "config-table-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `NAME = "value"` lines of wrangler.toml's [vars] table. */
function wranglerVars(): Record<string, string> {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const start = toml.indexOf("\n[vars]\n");
  const end = toml.indexOf("\n[", start + 1);
  const section = toml.slice(start, end === -1 ? undefined : end);
  return Object.fromEntries([...section.matchAll(/^([A-Z_]+) = "([^"]*)"$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The README's configuration rows by variable: default cell and meaning. */
function readmeRows(): Map<string, { fallback: string; doc: string }> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  return new Map([...readme.matchAll(/^\| `([A-Z_]+)` \| ([^|]*?) \| (.*) \|$/gm)].map((m) => [m[1]!, { fallback: m[2]!, doc: m[3]! }]));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the worker's configuration table", () => {
  it("is what wrangler.toml's [vars] sets: every variable with a default, at that default", () => {
    const expected = Object.fromEntries(settings.filter((s) => s.default !== null).map((s) => [s.name, s.default]));
    expect(wranglerVars()).toEqual(expected);
  });

  it("is the README's configuration table for every variable the operator sets", () => {
    const rows = readmeRows();
    for (const s of operatorSettings) {
      expect(rows.get(s.name), `${s.name} has no README row`).toBeDefined();
      expect(rows.get(s.name)).toEqual({ fallback: s.default === null ? "none" : `\`${s.default}\``, doc: s.doc });
    }
  });

  it("names every variable the worker and its objects read from env", () => {
    const known = new Set<string>(settings.map((s) => s.name));
    const read = new Set<string>();
    for (const file of [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "objects"))])
      for (const m of readFileSync(file, "utf8").matchAll(/\benv\.(SERVICE_[A-Z_]+|BUILD)\b/g)) read.add(m[1]!);
    expect([...read].filter((name) => !known.has(name))).toEqual([]);
  });

  it("is what the front passes through from the user's environment: the operator's variables, none of the front's own", () => {
    const env: NodeJS.ProcessEnv = { SERVICE_AGENTS_DATA_DIR: dataDir, SERVICE_BOOT_ID: "from-the-user", SERVICE_INTERNAL_TOKEN: "from-the-user" };
    for (const s of operatorSettings) env[s.name] = s.name === "SERVICE_ALLOWED_ORIGINS" ? "http://example.test" : s.name === "SERVICE_ALLOWED_HOSTS" ? "example.test" : "7";
    const { workerVars } = readFrontConfig(env, root);
    for (const s of operatorSettings) expect(workerVars[s.name], s.name).toBe(env[s.name]);
    expect(workerVars.SERVICE_BOOT_ID).toBeUndefined();
    expect(workerVars.SERVICE_INTERNAL_TOKEN).toBeUndefined();
  });
});

describe("readConfig", () => {
  it("reads each default as wrangler.toml writes it when a variable is unset", () => {
    const config = readConfig({});
    expect(config).toMatchObject({
      build: "dev",
      blobThreshold: 65536,
      maxBody: 8 * 1024 * 1024,
      heartbeatMs: 15_000,
      defaultModel: "sim-1",
      sessionCap: 16,
      sessionIdleMs: 30 * 60_000,
      interruptGraceMs: 5000,
      completionsDefaultWorkspace: null,
      hubUrl: null,
      internalToken: "",
      workspaces: null,
    });
    expect(config.faults.size).toBe(0);
    expect(config.accounts.size).toBe(0);
  });

  it("falls back to the default on a number that is not a positive one, and floors a fraction", () => {
    expect(readConfig({ SERVICE_SESSION_CAP: "-3" }).sessionCap).toBe(16);
    expect(readConfig({ SERVICE_SESSION_CAP: "many" }).sessionCap).toBe(16);
    expect(readConfig({ SERVICE_SESSION_CAP: "0" }).sessionCap).toBe(16);
    expect(readConfig({ SERVICE_SESSION_CAP: "4.9" }).sessionCap).toBe(4);
  });

  it("reads lists, the front's JSON and the caller policy", () => {
    const config = readConfig({
      SERVICE_FAULTS: " blob-put, ,other ",
      SERVICE_ACCOUNTS: JSON.stringify([{ id: "a1", provider: "openai" }]),
      SERVICE_WORKSPACES: JSON.stringify({ workspaces: [{ name: "w1", slug: "owner/repo", accounts: ["a1"] }] }),
      SERVICE_ALLOWED_HOSTS: "runtime.test:8080",
    });
    expect([...config.faults]).toEqual(["blob-put", "other"]);
    expect(config.accounts.get("a1")).toEqual({ id: "a1", provider: "openai" });
    expect(config.workspaces?.get("w1")?.accounts).toEqual(["a1"]);
    expect(config.callers.hosts.has("runtime.test:8080")).toBe(true);
  });
});
