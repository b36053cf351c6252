import type { Outcome } from "../api/outcome.js";
import { CODES } from "../api/errors.js";
import type { SpawnSpec, ThreadSpec } from "../api/threads.js";
import type { RuntimeConfig } from "../platform/config.js";
import { ENGINE_HOST_SILENT, engineList } from "../platform/engine-list.js";
import type { Env } from "../platform/env.js";
import { threadOf, workspaceOf } from "../platform/stubs.js";
import { fail, refused, valueOf } from "../http/answer.js";
import { newThreadId } from "../shared/ids.js";
import { refuseUnknownModels } from "./known-models.js";
import { spawnGate } from "./spawn-gate.js";
import { resolveSpawn, type OwnedWorktree } from "../rules/spawn.js";
import { rosterRefusal, spawnWorkspace, withDefaults } from "../rules/workspaces.js";
import { policyOf } from "./workspace-policy.js";

/**
 * SPEC: an engine_b thread (or chain entry) without the pinned CLI is refused before any
 * thread exists. So is an engine_a one when its CLI cannot run (no sandbox to fence it):
 * both run as processes of their own, which the engine host reports on. `pi` runs in
 * the front and is always there.
 */
export async function engineUnavailable(env: Env, spec: Pick<ThreadSpec, "engine" | "fallback">): Promise<void> {
  const engines = new Set([spec.engine, ...(spec.fallback ?? []).map((f) => f.engine)].filter((e) => e !== "pi"));
  if (engines.size === 0) return;
  const list = await engineList(env);
  for (const engine of engines) {
    const entry = list?.find((e) => e.engine === engine);
    if (!entry?.available) refused(503, `${engine} is not available: ${entry?.reason ?? ENGINE_HOST_SILENT}`, CODES.engineUnavailable, { engine: entry ?? null });
  }
}

/**
 * Creates a thread from a spawn request (or a fork's merged one), with every rule a new
 * thread passes: its workspace's defaults, roster and models, a model that exists, the engine's availability,
 * and the head slot, which the workspace's object grants before the thread exists and
 * takes back if the thread then cannot be created. Answers the thread id, or throws the refusal.
 */
export async function createThread(
  env: Env,
  config: RuntimeConfig,
  input: SpawnSpec,
  forkOf?: { parent: string; atSeq: number; transcript: string },
  delegatedBy?: { parent: string; operation: string },
  owned?: OwnedWorktree,
): Promise<{ threadId: string }> {
  const ws = valueOf(spawnWorkspace(config, input));
  const shaped = ws ? withDefaults(input, (await policyOf(env, ws)).defaults) : input;
  const spec = valueOf(resolveSpawn(shaped, config, owned));
  const roster = rosterRefusal(config, spec, ws);
  if (roster) fail(roster);
  // A model nobody named is the workspace's or the host's default: the refusal says whose to change.
  await refuseUnknownModels(env, spec, input.model ? "model" : shaped.model ? "model (the workspace's default)" : "model (SERVICE_DEFAULT_MODEL, as none was named)");
  await engineUnavailable(env, spec);
  const threadId = newThreadId();
  let taken = false;
  if (spec.role === "head") {
    if (!spec.workspace) refused(400, "a head thread belongs to a workspace: name one", CODES.headNeedsWorkspace);
    const claim = await workspaceOf(env, spec.workspace).claimHead(threadId);
    if (claim.holder) refused(409, `workspace ${spec.workspace} already has a head thread (${claim.holder})`, CODES.headTaken, { head: claim.holder });
    taken = claim.taken;
  }
  let created = false;
  try {
    // Last, as it may evict an idle session: nothing after it refuses the spawn.
    await spawnGate(env, config);
    // RPC types lose the union's narrowing: read it back as the Outcome it is.
    valueOf((await threadOf(env, threadId).init(threadId, spec, forkOf, delegatedBy)) as Outcome<unknown>);
    created = true;
    return { threadId };
  } finally {
    if (taken && !created) await workspaceOf(env, spec.workspace).releaseHead(threadId);
  }
}
