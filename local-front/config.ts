import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { WorkspacesFile } from "../src/api/workspaces.js";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

export interface FrontConfig {
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
  /** Engine resume state (SERVICE_ENGINE_STATE_DIR, default ~/.service/engine). */
  engineStateDir: string;
  /** SERVICE_ENGINE_B_BIN: engine_b's CLI, instead of the one npm installed. */
  engineBBin: string | undefined;
  simulatorPort: number;
  openai: { apiKey: string; baseUrl: string } | null;
  anthropic: { apiKey: string; baseUrl: string } | null;
}

/** Variables the worker reads; set in the front's environment, they override wrangler.toml. */
const WORKER_VARS = [
  "SERVICE_AGENTS_BLOB_THRESHOLD",
  "SERVICE_AGENTS_MAX_BODY",
  "SERVICE_SSE_HEARTBEAT_MS",
  "SERVICE_STREAM_SUBSCRIBERS",
  "SERVICE_STREAM_BUFFER",
  "SERVICE_DEFAULT_MODEL",
  "SERVICE_CATALOG_SYNC_MS",
  "SERVICE_FAULTS",
  "SERVICE_INTERRUPT_GRACE_MS",
];

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export class ConfigError extends Error {}

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
 * The operator's workspaces, checked, as the JSON the worker gets; null when there is no
 * file (the default file may be absent; a named one must exist). Read once at start.
 */
function readWorkspaces(path: string, named: boolean): string | null {
  if (!existsSync(path)) {
    if (named) throw new ConfigError(`SERVICE_WORKSPACES_FILE names ${path}, which does not exist`);
    return null;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = WorkspacesFile.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(`${path}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ")}`);
  return JSON.stringify(parsed.data);
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
  const rawDir = env.SERVICE_AGENTS_DATA_DIR || join(homedir(), ".service", "agents-host");
  const dataDir = isAbsolute(rawDir) ? rawDir : resolve(rawDir);
  const workerVars: Record<string, string> = {};
  for (const name of WORKER_VARS) if (env[name]) workerVars[name] = env[name]!;
  const workspaces = readWorkspaces(env.SERVICE_WORKSPACES_FILE || join(dataDir, "workspaces.json"), Boolean(env.SERVICE_WORKSPACES_FILE));
  if (workspaces) workerVars.SERVICE_WORKSPACES = workspaces;
  const heartbeatMs = Number(env.SERVICE_SSE_HEARTBEAT_MS);
  const openai = env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY, baseUrl: url("OPENAI_BASE_URL", env.OPENAI_BASE_URL || "https://api.openai.com/v1") } : null;
  const anthropic = env.ANTHROPIC_API_KEY
    ? { apiKey: env.ANTHROPIC_API_KEY, baseUrl: url("ANTHROPIC_BASE_URL", env.ANTHROPIC_BASE_URL || "https://api.anthropic.com") }
    : null;
  const sim = env.SERVICE_SIMULATOR || "auto";
  if (!["auto", "on", "off"].includes(sim)) throw new ConfigError(`SERVICE_SIMULATOR must be auto, on or off, not ${JSON.stringify(sim)}`);
  const rawSimPort = env.SERVICE_SIMULATOR_PORT ?? "0";
  if (!/^\d+$/.test(rawSimPort) || Number(rawSimPort) > 65535)
    throw new ConfigError(`SERVICE_SIMULATOR_PORT must be a port number, not ${JSON.stringify(rawSimPort)}`);
  return {
    host,
    port,
    dataDir,
    build: env.SERVICE_BUILD || gitCommit(projectDir),
    projectDir,
    followRelay: env.SERVICE_FOLLOW_RELAY !== "off",
    heartbeatMs: Number.isFinite(heartbeatMs) && heartbeatMs > 0 ? heartbeatMs : 15_000,
    workerVars,
    simulator: sim === "on" || (sim === "auto" && !openai && !anthropic),
    engineStateDir: resolve(env.SERVICE_ENGINE_STATE_DIR || join(homedir(), ".service", "engine")),
    engineBBin: env.SERVICE_ENGINE_B_BIN || undefined,
    simulatorPort: Number(rawSimPort),
    openai,
    anthropic,
  };
}
