import { accountRefusal } from "./accounts.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome, type Refusal } from "../api/outcome.js";
import type { SpawnSpec, ThreadSpec } from "../api/threads.js";
import type { Policy, WorkspaceConfig } from "../api/workspaces.js";
import type { RuntimeConfig } from "../platform/config.js";

/**
 * The workspace a spawn names, which must exist when the host configures workspaces (an
 * unconfigured host treats names as labels, and answers null). A spawn with no workspace
 * may not use an account a workspace claims.
 */
export function spawnWorkspace(config: RuntimeConfig, input: SpawnSpec): Outcome<WorkspaceConfig | null> {
  const all = config.workspaces;
  if (!input.workspace) {
    const claimant = input.account && all ? [...all.values()].find((w) => w.accounts.includes(input.account!)) : undefined;
    if (claimant)
      return refuse(400, `account ${input.account} belongs to workspace ${claimant.name}; spawn in it`, CODES.accountNotInRoster, {
        workspace: claimant.name,
        accounts: claimant.accounts,
      });
    return ok(null);
  }
  if (!all) return ok(null);
  const ws = all.get(input.workspace);
  if (!ws) return refuse(404, `no workspace ${input.workspace}`, CODES.workspaceNotFound, { workspaces: [...all.keys()] });
  return ok(ws);
}

/** A spawn with its workspace policy's defaults filling what it omits. */
export function withDefaults(input: SpawnSpec, defaults: Policy["defaults"]): SpawnSpec {
  // A spawn that names a model without an engine picks the engine from that model, not from the defaults.
  const { engine, ...rest } = defaults;
  return { ...rest, ...(input.model && !input.engine ? {} : engine ? { engine } : {}), ...input };
}

/** The account, the roster and the allowed models, checked on the spec with every default filled in. */
export function rosterRefusal(config: RuntimeConfig, spec: ThreadSpec, ws: WorkspaceConfig | null): Refusal | null {
  const badAccount = accountRefusal(config, spec.account, spec.engine, spec.model);
  if (badAccount) return badAccount;
  if (!ws) return null;
  if (spec.account && !ws.accounts.includes(spec.account))
    return refuse(400, `account ${spec.account} is not in workspace ${ws.name}'s roster`, CODES.accountNotInRoster, { accounts: ws.accounts });
  const models = [spec.model, ...(spec.fallback ?? []).map((f) => f.model)];
  const outside = models.find((m) => ws.allowedModels.length > 0 && !ws.allowedModels.includes(m));
  if (outside)
    return refuse(400, `model ${outside} is not allowed in workspace ${ws.name}`, CODES.modelNotAllowed, { allowedModels: ws.allowedModels });
  return null;
}
