import { CODES } from "../api/errors.js";
import type { ExternalPeer } from "../api/operator.js";
import type { Placement } from "../api/seats.js";
import type { EngineModel, SpawnSpec, ThreadRow, ThreadSpec } from "../api/threads.js";
import { fail, refused, valueOf } from "../http/answer.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { hostOf } from "../platform/stubs.js";
import { chainEntry, resolveSpawn } from "../rules/spawn.js";
import { rosterRefusal, spawnWorkspace, withDefaults } from "../rules/workspaces.js";
import { engineUnavailable } from "./create-thread.js";
import { refuseUnknownModels } from "./known-models.js";
import { policyOf } from "./workspace-policy.js";

export interface SeatChoice {
  engine?: EngineModel["engine"];
  model?: string;
  placement?: string;
}

/**
 * The engine, model and placement a seat joins with or is replaced by, under the rules a
 * spawn meets in the thread's workspace: its policy's defaults for a new seat, engine and
 * model that go together, the workspace's roster and allowed models, a model that exists
 * and the engine there to run it, and for a seat placed on a peer, a peer registered by
 * that name. `current` is the seat being replaced: what the request leaves out stays as
 * it is, and a new model alone keeps the seat's engine when that engine can serve it.
 * Throws the refusal.
 */
export async function seatTarget(env: Env, config: RuntimeConfig, row: ThreadRow, choice: SeatChoice, current: (EngineModel & { placement: Placement }) | null): Promise<EngineModel & { placement: Placement }> {
  const placement = (choice.placement ?? current?.placement ?? "host") as Placement;
  const ws = valueOf(spawnWorkspace(config, { ...(row.spec.workspace ? { workspace: row.spec.workspace } : {}) }));
  let picked: SpawnSpec;
  if (current && choice.engine === undefined && choice.model === undefined) picked = { engine: current.engine, model: current.model };
  else if (current && choice.model !== undefined && choice.engine === undefined) picked = chainEntry(choice.model, current.engine);
  else {
    const asked: SpawnSpec = { ...(choice.engine ? { engine: choice.engine } : {}), ...(choice.model ? { model: choice.model } : {}) };
    const defaults = ws && !current ? (await policyOf(env, ws)).defaults : {};
    const { engine, model } = withDefaults(asked, defaults);
    picked = { ...(engine ? { engine } : {}), ...(model ? { model } : {}) };
  }
  // A pull request's thread works in the runtime's own worktree, which no caller may name as a cwd.
  const owned = row.spec.worktree && row.spec.pr && row.spec.cwd ? { cwd: row.spec.cwd, mode: row.spec.worktree, pr: row.spec.pr } : undefined;
  const resolved = valueOf(resolveSpawn({ ...picked, type: row.spec.type, ...(row.spec.cwd && !owned ? { cwd: row.spec.cwd } : {}) }, config, owned));
  const target = { engine: resolved.engine, model: resolved.model };
  const spec: ThreadSpec = { ...row.spec, proxyEnv: null, ...target, fallback: null };
  const roster = rosterRefusal(config, spec, ws);
  if (roster) fail(roster);
  if (placement === "host") {
    await refuseUnknownModels(env, target);
    await engineUnavailable(env, spec);
  }
  else {
    const name = placement.slice("peer:".length);
    const peers = JSON.parse(await hostOf(env).records("peer")) as ExternalPeer[];
    if (!peers.some((p) => p.name === name)) refused(404, `no external peer ${name} is registered (POST /peers/external)`, CODES.peerNotFound);
  }
  return { ...target, placement };
}
