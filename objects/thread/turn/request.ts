import type { TurnRequest } from "../../../src/api/engine.js";
import type { EngineModel, ThreadSpec } from "../../../src/api/threads.js";
import type { RuntimeConfig } from "../../../src/platform/config.js";
import { turnAccount } from "../../../src/rules/accounts.js";

/** Where a thread's engine session runs and on whose account: the same for a turn and for the engine's own compaction of its session. */
export function sessionPlace(config: RuntimeConfig, spec: ThreadSpec, active: EngineModel): Pick<TurnRequest, "permissions" | "cwd" | "buildFence" | "worktree" | "account" | "accountChoice" | "proxyEnv"> {
  return {
    permissions: spec.permissions,
    cwd: spec.cwd,
    ...(spec.type === "build" ? { buildFence: true as const } : {}),
    ...(spec.worktree ? { worktree: spec.worktree } : {}),
    ...turnAccount(config, spec, active.engine, active.model),
    proxyEnv: spec.proxyEnv,
  };
}
