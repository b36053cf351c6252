import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { z } from "zod";
import { CallerPolicyError, readCallerPolicy, type CallerPolicy } from "../../src/rules/caller-policy.js";
import { isLoopback } from "../../src/shared/loopback.js";
import { AccountsFile, type AccountConfig, type CodeHostAccount, type PublicAccount } from "../../src/api/accounts.js";
import { WorkspacesFile } from "../../src/api/workspaces.js";
import { SETTINGS } from "../../src/platform/config.js";
import { homedir } from "node:os";
import { realpathSync, statSync } from "node:fs";
import { basename } from "node:path";
import { within, type RootEntry } from "../bindings/code/fence.js";
import { realPath, runtimePlaces } from "../bindings/sandbox/runtime.js";
import { issuesSentence } from "../../src/shared/issues.js";
import { isAbsolute, join, resolve } from "node:path";

/**
 * The code roots: `SERVICE_CODE_ROOTS` (directories separated by `:`, each named by its
 * base name) and each workspace's `repos` (named as given), each an existing directory,
 * by its real path, names unique.
 */
function codeRootsOf(list: string | undefined, workspaces: z.infer<typeof WorkspacesFile> | null, secrets: string[]): RootEntry[] {
  const wanted = [
    ...(list ?? "").split(":").filter(Boolean).map((path) => ({ name: basename(path), path, workspace: null as string | null, from: "SERVICE_CODE_ROOTS" })),
    ...(workspaces?.workspaces ?? []).flatMap((w) => w.repos.map((r) => ({ name: r.name, path: r.path, workspace: w.name as string | null, from: `workspace ${w.name}'s repos` }))),
  ];
  const roots: RootEntry[] = [];
  for (const r of wanted) {
    if (!isAbsolute(r.path)) throw new ConfigError(`${r.from}: ${r.path} is not an absolute path`);
    let real: string;
    try {
      real = realpathSync(r.path);
      if (!statSync(real).isDirectory()) throw new Error("not a directory");
    } catch {
      throw new ConfigError(`${r.from}: ${r.path} is not a directory`);
    }
    if (roots.some((x) => x.name === r.name)) throw new ConfigError(`${r.from}: a code root named ${r.name} is registered twice`);
    // What sessions may not see (the data directory, the engine state, the secret files) no root may hold.
    const hidden = secrets.find((s) => within(real, s) || within(s, real));
    if (hidden) throw new ConfigError(`${r.from}: ${r.path} overlaps ${hidden}, which holds the runtime's state and secrets`);
    // One root inside another of another owner would let the outer one's readers read it.
    const nested = roots.find((x) => x.workspace !== r.workspace && (within(x.path, real) || within(real, x.path)));
    if (nested) throw new ConfigError(`${r.from}: ${r.path} overlaps code root ${nested.name}, which another workspace (or the host) registered`);
    roots.push({ name: r.name, path: real, workspace: r.workspace });
  }
  return roots;
}



export interface FrontConfig {
  /** The registered code roots (docs/code.md): `SERVICE_CODE_ROOTS` and the workspaces' `repos`, by real path. */
  codeRoots: RootEntry[];
  /** What the front runs (the checkout, its node_modules, Node's prefix), which no session may change. */
  runtime: string[];
  host: string;
  port: number;
  dataDir: string;
  build: string;
  projectDir: string;
  /** Relay follow streams in the front (SERVICE_FOLLOW_RELAY=off serves every follower from workerd). */
  followRelay: boolean;
  heartbeatMs: number;
  /** SERVICE_* variables that override the worker's [vars] from wrangler.toml. */
  workerVars: Record<string, string>;
  /** Start the provider simulator (SERVICE_SIMULATOR: auto = when no provider key is set). */
  simulator: boolean;
  /** Engine resume state (SERVICE_ENGINE_STATE_DIR, default <data dir>/engine). */
  engineStateDir: string;
  /** SERVICE_ENGINE_B_BIN: engine_b's CLI, instead of the one npm installed. */
  engineABin: string | undefined;
  engineBBin: string | undefined;
  simulatorPort: number;
  /** SERVICE_SIMULATOR_TOKEN_SECONDS: the lifetime of the access tokens the TLS simulator issues to OAuth logins. */
  simulatorTokenSeconds: number;
  /** accounts.json (or SERVICE_ACCOUNTS_FILE), plus OPENAI_API_KEY / ANTHROPIC_API_KEY as accounts of their own. */
  accounts: AccountConfig[];
  /** accounts.json's code-host accounts (`provider: "github"`), for the code-host client only. */
  codeHostAccounts: CodeHostAccount[];
  /** The code-host simulator stands in for GitHub (SERVICE_CODE_HOST_SIMULATOR), seeded from this file when one is named (SERVICE_CODE_HOST_SEED). */
  codeHostSimulator: { on: boolean; seedPath: string | null; slugs: string[] };
  /** The credential proxy: SERVICE_PROXY (on unless `off`), SERVICE_PROXY_URL, SERVICE_PROXY_CA. */
  proxy: { on: boolean; externalUrl: string | null; caPath: string; caGiven: boolean };
  /** SERVICE_PROVIDER_UPSTREAM: `simulator` sends every provider host's traffic to the built-in simulator over TLS. */
  providerUpstream: "providers" | "simulator";
  /** SERVICE_ACCESS_TOKEN_RATE: access tokens one account may issue per minute. */
  accessTokensPerMinute: number;
  /** The disk keeper: SERVICE_KEEPER_INTERVAL_MS, SERVICE_KEEPER_PAUSE_GB, SERVICE_KEEPER_RESUME_GB. */
  keeper: { intervalMs: number; pauseBelowBytes: number; resumeAboveBytes: number };
  /** The operator's accounts file (SERVICE_ACCOUNTS_FILE, default <data dir>/accounts.json): a secret sessions must not see. */
  accountsPath: string;
  /** SERVICE_SANDBOX: `on` fences every session with bubblewrap, `off` runs them unfenced (local-front/bindings/sandbox/). */
  sandbox: "on" | "off";
  /** SERVICE_SANDBOX_INSTALL: `auto` installs a missing bubblewrap from Debian's packages at start (as root or with `sudo -n`), `off` never installs. */
  sandboxInstall: "auto" | "off";
  /** SERVICE_ALLOWED_HOSTS and SERVICE_ALLOWED_ORIGINS, checked here so that a bad value stops the start, not every request. */
  callers: CallerPolicy;
}

/** Variables the worker reads that are the user's: set in the front's environment, they override wrangler.toml. */
const WORKER_VARS = Object.values(SETTINGS)
  .filter((s) => s.source === "operator")
  .map((s) => s.name);

export class ConfigError extends Error {}

const defaultDataDir = () => join(homedir(), ".service", "agents-host");

/** SERVICE_AGENTS_DATA_DIR, absolute (default ~/.service/agents-host). */
export function dataDirOf(env: NodeJS.ProcessEnv): string {
  const rawDir = env.SERVICE_AGENTS_DATA_DIR || defaultDataDir();
  return isAbsolute(rawDir) ? rawDir : resolve(rawDir);
}

/** Where builds before issue 27 kept engine state by default, whatever the data directory. */
export function formerEngineStateDir(): string {
  return join(homedir(), ".service", "engine");
}

/**
 * SERVICE_ENGINE_STATE_DIR, absolute; by default `<data dir>/engine`, so that runtimes on
 * one host keep their engines' sessions apart. An installation upgraded in place (the
 * default data directory, state at the former default and none inside) keeps using the
 * former place, so its threads resume (docs/decisions.md, "Runtimes on one host are apart").
 */
export function engineStateDirOf(env: NodeJS.ProcessEnv, dataDir = dataDirOf(env)): string {
  if (env.SERVICE_ENGINE_STATE_DIR) return resolve(env.SERVICE_ENGINE_STATE_DIR);
  const inside = join(dataDir, "engine");
  const former = formerEngineStateDir();
  const upgraded = resolve(dataDir) === defaultDataDir() && !existsSync(inside) && existsSync(former) && statSync(former).isDirectory();
  return upgraded ? former : inside;
}

/** SERVICE_BUILD, else the checkout's commit. */
export function buildOf(env: NodeJS.ProcessEnv, projectDir: string): string {
  return env.SERVICE_BUILD || gitCommit(projectDir);
}

function gitCommit(projectDir: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: projectDir, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return "dev";
  }
}

function url(name: string, value: string): string {
  try {
    return new URL(value).toString().replace(/\/$/, "");
  } catch {
    throw new ConfigError(`${name} must be a URL, not ${JSON.stringify(value)}`);
  }
}

/**
 * An operator's JSON file, checked against `schema`; null when there is no file (the
 * default file may be absent; one a variable names must exist). Read once at start.
 */
function readOperatorFile<S extends z.ZodType>(path: string, variable: string | null, schema: S): z.infer<S> | null {
  if (!existsSync(path)) {
    if (variable) throw new ConfigError(`${variable} names ${path}, which does not exist`);
    return null;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(`${path}: ${issuesSentence(parsed.error, "(file)")}`);
  return parsed.data;
}

/** Provider keys in the environment are accounts too, so they reach sessions only through the proxy. */
function envAccounts(env: NodeJS.ProcessEnv): AccountConfig[] {
  const out: AccountConfig[] = [];
  if (env.OPENAI_API_KEY)
    out.push({ id: "env-openai", provider: "openai", label: "OPENAI_API_KEY", apiKey: env.OPENAI_API_KEY, baseUrl: url("OPENAI_BASE_URL", env.OPENAI_BASE_URL || "https://api.openai.com/v1") });
  if (env.ANTHROPIC_API_KEY)
    out.push({ id: "env-anthropic", provider: "anthropic", label: "ANTHROPIC_API_KEY", apiKey: env.ANTHROPIC_API_KEY, baseUrl: url("ANTHROPIC_BASE_URL", env.ANTHROPIC_BASE_URL || "https://api.anthropic.com") });
  return out;
}

/** With accounts configured, every account a workspace names must be one of them. */
function checkRosters(workspaces: WorkspacesFile | null, accounts: AccountConfig[]): void {
  if (!workspaces || accounts.length === 0) return;
  const known = new Set(accounts.map((a) => a.id));
  for (const w of workspaces.workspaces)
    for (const id of [...w.accounts, ...(w.policy.defaults.account ? [w.policy.defaults.account] : [])])
      if (!known.has(id)) throw new ConfigError(`workspace ${w.name} names account ${id}, which accounts.json does not configure (known: ${[...known].join(", ")})`);
}

/** A non-negative number from the environment, or its default. */
function decimal(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name} must be a non-negative number, not ${JSON.stringify(raw)}`);
  return n;
}

export function readFrontConfig(env: NodeJS.ProcessEnv, projectDir: string): FrontConfig {
  const host = env.SERVICE_AGENTS_HOST || "127.0.0.1";
  if (!isLoopback(host))
    throw new ConfigError(
      `refusing to listen on ${host}: the runtime binds loopback only (127.0.0.0/8, ::1 or localhost); reach it remotely through a local front`,
    );
  const rawPort = env.SERVICE_AGENTS_PORT ?? "4741";
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) throw new ConfigError(`SERVICE_AGENTS_PORT must be a port number, not ${JSON.stringify(rawPort)}`);
  const dataDir = dataDirOf(env);
  const workerVars: Record<string, string> = {};
  for (const name of WORKER_VARS) if (env[name]) workerVars[name] = env[name]!;
  const workspaces = readOperatorFile(env.SERVICE_WORKSPACES_FILE || join(dataDir, "workspaces.json"), env.SERVICE_WORKSPACES_FILE ? "SERVICE_WORKSPACES_FILE" : null, WorkspacesFile);
  if (workspaces) workerVars.SERVICE_WORKSPACES = JSON.stringify(workspaces);
  const accountsPath = resolve(env.SERVICE_ACCOUNTS_FILE || join(dataDir, "accounts.json"));
  const accountsFile = readOperatorFile(accountsPath, env.SERVICE_ACCOUNTS_FILE ? "SERVICE_ACCOUNTS_FILE" : null, AccountsFile);
  const accounts = [...(accountsFile?.accounts ?? []), ...envAccounts(env)];
  if (new Set(accounts.map((a) => a.id)).size !== accounts.length) throw new ConfigError("accounts.json may not use the ids env-openai or env-anthropic while OPENAI_API_KEY or ANTHROPIC_API_KEY is set");
  checkRosters(workspaces, accounts);
  const completionsDefault = env.SERVICE_COMPLETIONS_DEFAULT_WORKSPACE;
  if (completionsDefault && workspaces && !workspaces.workspaces.some((w) => w.name === completionsDefault))
    throw new ConfigError(`SERVICE_COMPLETIONS_DEFAULT_WORKSPACE names ${completionsDefault}, which the workspaces file does not configure`);
  workerVars.SERVICE_ACCOUNTS = JSON.stringify(accounts.map((a): PublicAccount => ({ id: a.id, provider: a.provider })));
  const heartbeatMs = Number(env.SERVICE_SSE_HEARTBEAT_MS);
  const proxyMode = env.SERVICE_PROXY || "on";
  if (!["on", "off"].includes(proxyMode)) throw new ConfigError(`SERVICE_PROXY must be on or off, not ${JSON.stringify(proxyMode)}`);
  const upstream = env.SERVICE_PROVIDER_UPSTREAM || "providers";
  if (upstream !== "providers" && upstream !== "simulator")
    throw new ConfigError(`SERVICE_PROVIDER_UPSTREAM must be providers or simulator, not ${JSON.stringify(upstream)}`);
  const rawRate = env.SERVICE_ACCESS_TOKEN_RATE ?? "12";
  if (!/^\d+$/.test(rawRate) || Number(rawRate) < 1) throw new ConfigError(`SERVICE_ACCESS_TOKEN_RATE must be a positive whole number, not ${JSON.stringify(rawRate)}`);
  const keeper = {
    intervalMs: Math.max(100, decimal(env, "SERVICE_KEEPER_INTERVAL_MS", 30_000)),
    pauseBelowBytes: decimal(env, "SERVICE_KEEPER_PAUSE_GB", 10) * 1e9,
    resumeAboveBytes: decimal(env, "SERVICE_KEEPER_RESUME_GB", 30) * 1e9,
  };
  if (keeper.resumeAboveBytes < keeper.pauseBelowBytes) throw new ConfigError("SERVICE_KEEPER_RESUME_GB must not be under SERVICE_KEEPER_PAUSE_GB");
  let callers: CallerPolicy;
  try {
    callers = readCallerPolicy(env.SERVICE_ALLOWED_HOSTS, env.SERVICE_ALLOWED_ORIGINS);
  } catch (err) {
    if (err instanceof CallerPolicyError) throw new ConfigError(err.message);
    throw err;
  }
  const sandbox = env.SERVICE_SANDBOX || "on";
  if (sandbox !== "on" && sandbox !== "off") throw new ConfigError(`SERVICE_SANDBOX must be on or off, not ${JSON.stringify(sandbox)}`);
  const sandboxInstall = env.SERVICE_SANDBOX_INSTALL || "auto";
  if (sandboxInstall !== "auto" && sandboxInstall !== "off") throw new ConfigError(`SERVICE_SANDBOX_INSTALL must be auto or off, not ${JSON.stringify(sandboxInstall)}`);
  const sim = env.SERVICE_SIMULATOR || "auto";
  if (!["auto", "on", "off"].includes(sim)) throw new ConfigError(`SERVICE_SIMULATOR must be auto, on or off, not ${JSON.stringify(sim)}`);
  const rawSimPort = env.SERVICE_SIMULATOR_PORT ?? "0";
  if (!/^\d+$/.test(rawSimPort) || Number(rawSimPort) > 65535)
    throw new ConfigError(`SERVICE_SIMULATOR_PORT must be a port number, not ${JSON.stringify(rawSimPort)}`);
  const rawTokenSeconds = env.SERVICE_SIMULATOR_TOKEN_SECONDS || "3600";
  if (!/^[1-9]\d{0,6}$/.test(rawTokenSeconds))
    throw new ConfigError(`SERVICE_SIMULATOR_TOKEN_SECONDS must be a whole number of seconds from 1, not ${JSON.stringify(rawTokenSeconds)}`);
  const hostSim = env.SERVICE_CODE_HOST_SIMULATOR || "auto";
  if (!["auto", "on", "off"].includes(hostSim)) throw new ConfigError(`SERVICE_CODE_HOST_SIMULATOR must be auto, on or off, not ${JSON.stringify(hostSim)}`);
  const seedPath = env.SERVICE_CODE_HOST_SEED ? resolve(env.SERVICE_CODE_HOST_SEED) : null;
  if (seedPath && !existsSync(seedPath)) throw new ConfigError(`SERVICE_CODE_HOST_SEED names ${seedPath}, which does not exist`);
  const hostSimOn = hostSim === "on" || (hostSim === "auto" && (accountsFile?.codeHosts ?? []).length === 0);
  if (seedPath && !hostSimOn)
    throw new ConfigError(
      hostSim === "off"
        ? "SERVICE_CODE_HOST_SEED seeds the code-host simulator, which SERVICE_CODE_HOST_SIMULATOR=off turns off"
        : "SERVICE_CODE_HOST_SEED seeds the code-host simulator, which does not run: accounts.json has a code-host account (SERVICE_CODE_HOST_SIMULATOR=on runs it instead)",
    );
  const existing = (p: string) => {
    try {
      return [realpathSync(p)];
    } catch {
      return [resolve(p)];
    }
  };
  const engineStateDir = engineStateDirOf(env, dataDir);
  const codeRoots = codeRootsOf(env.SERVICE_CODE_ROOTS, workspaces, [dataDir, engineStateDir, accountsPath, resolve(env.SERVICE_PROXY_CA || join(dataDir, "proxy", "ca.pem"))].flatMap(existing));
  // The worker fences build threads out of these checkouts (src/rules/spawn.ts), by their real paths and the paths as registered.
  const fence = [...new Set([...codeRoots.map((r) => r.path), ...(env.SERVICE_CODE_ROOTS ?? "").split(":").filter(Boolean).map((p) => resolve(p)), ...(workspaces?.workspaces ?? []).flatMap((w) => w.repos.map((r) => resolve(r.path)))])];
  if (codeRoots.length) workerVars.SERVICE_CODE_FENCE = JSON.stringify(fence);
  // The worker refuses a session's cwd in the runtime's private data or holding its programs (src/rules/spawn.ts), by real paths and the paths as given.
  const runtime = runtimePlaces(projectDir);
  const privateDirs = [...new Set([dataDir, engineStateDir].flatMap((p) => [resolve(p), realPath(p)]))];
  workerVars.SERVICE_RUNTIME_FENCE = JSON.stringify({ private: privateDirs, runtime });
  return {
    codeRoots,
    runtime,
    host,
    port,
    dataDir,
    build: buildOf(env, projectDir),
    projectDir,
    followRelay: env.SERVICE_FOLLOW_RELAY !== "off",
    heartbeatMs: Number.isFinite(heartbeatMs) && heartbeatMs > 0 ? heartbeatMs : 15_000,
    workerVars,
    simulator: sim === "on" || (sim === "auto" && accounts.length === 0),
    engineStateDir,
    engineABin: env.SERVICE_ENGINE_A_BIN || undefined,
    engineBBin: env.SERVICE_ENGINE_B_BIN || undefined,
    simulatorPort: Number(rawSimPort),
    simulatorTokenSeconds: Number(rawTokenSeconds),
    accounts,
    codeHostAccounts: accountsFile?.codeHosts ?? [],
    codeHostSimulator: { on: hostSimOn, seedPath, slugs: (workspaces?.workspaces ?? []).map((w) => w.slug) },
    proxy: {
      on: proxyMode === "on",
      externalUrl: env.SERVICE_PROXY_URL ? url("SERVICE_PROXY_URL", env.SERVICE_PROXY_URL) : null,
      caPath: resolve(env.SERVICE_PROXY_CA || join(dataDir, "proxy", "ca.pem")),
      caGiven: Boolean(env.SERVICE_PROXY_CA),
    },
    providerUpstream: upstream,
    accessTokensPerMinute: Number(rawRate),
    keeper,
    accountsPath,
    sandbox,
    sandboxInstall,
    callers,
  };
}
