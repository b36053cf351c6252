import type { Provider } from "../api/accounts.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import type { Engine, EngineModel, PrLink, SpawnSpec, ThreadSpec } from "../api/threads.js";
import type { RuntimeConfig } from "../platform/config.js";

/** Short family aliases of the engine_a vendor's models: engine_a's own client turns one into a model id of the family. */
const ENGINE_A_ALIASES = new Set(["opus", "sonnet", "haiku"]);

export function isEngineAAlias(model: string): boolean {
  return ENGINE_A_ALIASES.has(model);
}

export function isEngineAModel(model: string): boolean {
  return model.startsWith("claude-") || ENGINE_A_ALIASES.has(model);
}

/** SPEC: a model of the engine_a family selects engine_a; every other id selects pi; never engine_b. */
export function engineForModel(model: string): Engine {
  return isEngineAModel(model) ? "engine_a" : "pi";
}

/**
 * The provider that serves a model on an engine: engine_a speaks to its vendor, engine_b
 * to OpenAI, and `pi` follows the model's family.
 */
export function providerOf(engine: Engine, model: string): Provider {
  if (engine === "engine_a") return "anthropic";
  if (engine === "engine_b") return "openai";
  return isEngineAModel(model) ? "anthropic" : "openai";
}

function mismatch(engine: Engine, model: string): string | null {
  if (engine === "engine_b" && isEngineAModel(model)) return `engine_b cannot serve ${model}: it is an engine_a model`;
  if (engine === "engine_a" && !isEngineAModel(model)) return `engine_a serves only its vendor's models (claude-*, opus, sonnet, haiku), not ${model}`;
  return null;
}

/** A chain entry (or a seat's new model): a bare model id keeps the engine when that engine can serve it. */
export function chainEntry(entry: string | EngineModel, engine: Engine): EngineModel {
  if (typeof entry !== "string") return entry;
  return { engine: mismatch(engine, entry) ? engineForModel(entry) : engine, model: entry };
}

/** `cwd` as an absolute path with `.` and `..` resolved, as written (the worker cannot follow links). */
function normal(cwd: string): string {
  const parts: string[] = [];
  for (const p of cwd.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return `/${parts.join("/")}`;
}

/** `p` is `dir` or lies inside it, path component by path component (`/work/main2` is not inside `/work/main`). */
function under(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/**
 * The registered checkout a path lies in, or holds (a build thread's working directory is
 * writable, all of it), or null; the path as given, `..` resolved, against the roots'
 * real paths and their paths as registered.
 */
export function fencedBy(cwd: string, roots: readonly string[]): string | null {
  const path = normal(cwd);
  return roots.find((root) => under(root, path) || under(path, root)) ?? null;
}

/**
 * Why no session may work in `cwd` (it is bound writable, all of it), or null: it is `/`,
 * lies in the runtime's private data (`fence.private`), or holds what the front runs
 * (`fence.runtime`: a session could rewrite code the front runs later, unfenced). Judged by
 * the path as written, so a cwd that does not exist yet is judged too; the sandbox checks
 * its real path again where the session starts.
 */
export function runtimeFenced(cwd: string, fence: RuntimeConfig["runtimeFence"]): { place: string; why: string } | null {
  const path = normal(cwd);
  if (path === "/") return { place: "/", why: "it is the filesystem's root, which holds the runtime itself" };
  const secret = fence.private.find((dir) => under(dir, path));
  if (secret) return { place: secret, why: `it lies in the runtime's private data (${secret}), which sessions may not read` };
  const held = fence.runtime.find((dir) => under(path, dir));
  if (held) return { place: held, why: `it holds the runtime's own programs (${held}), which sessions may not change` };
  return null;
}

/** A worktree the runtime made under its data directory for a pull request's thread: the one cwd there a session may have. */
export interface OwnedWorktree {
  cwd: string;
  mode: "review" | "build";
  pr: PrLink;
}

/**
 * The worktree a child (a delegation, a fork) of a pull request's thread shares with it,
 * when it names no cwd of its own: the child works on the same pull request, in the same
 * mode, and reviews for no room (only the room's own thread returns its verdicts).
 */
export function sharedWorktree(parent: Pick<ThreadSpec, "cwd" | "pr" | "worktree">, childCwd: string | undefined): OwnedWorktree | undefined {
  if (!parent.worktree || !parent.pr || !parent.cwd || (childCwd !== undefined && childCwd !== parent.cwd)) return undefined;
  return { cwd: parent.cwd, mode: parent.worktree, pr: { ...parent.pr, room: null } };
}

/**
 * Fills a spawn's omitted fields and refuses combinations no engine can run. `owned`: the
 * runtime's own worktree for a pull request's thread, which the caller cannot name in `cwd`.
 */
export function resolveSpawn(input: SpawnSpec, config: RuntimeConfig, owned?: OwnedWorktree): Outcome<ThreadSpec> {
  const model = input.model ?? (input.engine === "engine_a" ? "sonnet" : config.defaultModel);
  const engine = input.engine ?? engineForModel(model);
  const wrong = mismatch(engine, model);
  if (wrong) return refuse(422, wrong, CODES.engineModelMismatch, { engine, model });
  const fallback = (input.fallback ?? []).map((e) => chainEntry(e, engine));
  for (const [i, e] of fallback.entries()) {
    const bad = mismatch(e.engine, e.model);
    if (bad) return refuse(422, `fallback[${i}]: ${bad}`, CODES.engineModelMismatch, { ...e, index: i });
  }
  const type = input.type ?? "chat";
  if (owned) return ok({ ...settled(input, config, engine, model, fallback, type), cwd: owned.cwd, pr: owned.pr, worktree: owned.mode });
  if (type === "build" && !input.cwd)
    return refuse(400, "a build thread needs a cwd", CODES.spawnCwdRequired);
  const runtime = input.cwd ? runtimeFenced(input.cwd, config.runtimeFence) : null;
  if (runtime) return refuse(400, `a session does not work in ${input.cwd}: ${runtime.why}`, CODES.spawnCwdFenced, { place: runtime.place });
  const fence = type === "build" && input.cwd ? fencedBy(input.cwd, config.codeFence) : null;
  if (fence)
    return refuse(400, `a build thread does not work in the registered checkout ${fence}: it works in a worktree of its own`, CODES.spawnCwdFenced, { root: fence });
  return ok(settled(input, config, engine, model, fallback, type));
}

function settled(input: SpawnSpec, config: RuntimeConfig, engine: ThreadSpec["engine"], model: string, fallback: EngineModel[], type: ThreadSpec["type"]): ThreadSpec {
  return {
    workspace: input.workspace ?? null,
    title: input.title ?? null,
    role: input.role ?? "chat",
    type,
    engine,
    model,
    permissions: input.permissions ?? "ask",
    cwd: input.cwd ?? null,
    account: input.account ?? null,
    proxyEnv: input.proxyEnv ?? null,
    fallback: fallback.length ? fallback : null,
    approvalTimeoutMs: input.approvalTimeoutMs ?? null,
    questionTimeoutMs: input.questionTimeoutMs ?? null,
    onBusy: input.onBusy ?? config.onBusy,
    recall: input.recall ?? null,
  };
}
