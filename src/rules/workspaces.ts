import { accountRefusal } from "./accounts.js";
import { CODES } from "../api/errors.js";
import type { SpawnSpec, ThreadSpec } from "../api/threads.js";
import { Policy, type WorkspaceConfig } from "../api/workspaces.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { workspaceOf } from "../platform/stubs.js";
import { refusal } from "../http/answer.js";

/** The policy in force: what the owner set (`PUT .../policy`), else the configured one. */
export async function policyOf(env: Env, ws: WorkspaceConfig): Promise<Policy> {
  const owned = await workspaceOf(env, ws.name).policy();
  return owned ? Policy.parse(JSON.parse(owned)) : ws.policy;
}

/**
 * A spawn as its workspace shapes it: the workspace must exist (when the host configures
 * workspaces; an unconfigured host treats names as labels) and its policy's defaults fill
 * what the spawn omits. A spawn with no workspace may not use an account a workspace claims.
 */
export async function withWorkspace(
  env: Env,
  config: RuntimeConfig,
  input: SpawnSpec,
): Promise<{ input: SpawnSpec; ws: WorkspaceConfig | null } | Response> {
  const all = config.workspaces;
  if (!input.workspace) {
    const claimant = input.account && all ? [...all.values()].find((w) => w.accounts.includes(input.account!)) : undefined;
    if (claimant)
      return refusal(400, `account ${input.account} belongs to workspace ${claimant.name}; spawn in it`, CODES.accountNotInRoster, {
        workspace: claimant.name,
        accounts: claimant.accounts,
      });
    return { input, ws: null };
  }
  if (!all) return { input, ws: null };
  const ws = all.get(input.workspace);
  if (!ws) return refusal(404, `no workspace ${input.workspace}`, CODES.workspaceNotFound, { workspaces: [...all.keys()] });
  const { defaults } = await policyOf(env, ws);
  // A spawn that names a model without an engine picks the engine from that model, not from the defaults.
  const { engine, ...rest } = defaults;
  const merged = { ...rest, ...(input.model && !input.engine ? {} : engine ? { engine } : {}), ...input };
  return { input: merged, ws };
}

/** The account, the roster and the allowed models, checked on the spec with every default filled in. */
export function rosterRefusal(config: RuntimeConfig, spec: ThreadSpec, ws: WorkspaceConfig | null): Response | null {
  const badAccount = accountRefusal(config, spec.account, spec.engine, spec.model);
  if (badAccount) return badAccount;
  if (!ws) return null;
  if (spec.account && !ws.accounts.includes(spec.account))
    return refusal(400, `account ${spec.account} is not in workspace ${ws.name}'s roster`, CODES.accountNotInRoster, { accounts: ws.accounts });
  const models = [spec.model, ...(spec.fallback ?? []).map((f) => f.model)];
  const outside = models.find((m) => ws.allowedModels.length > 0 && !ws.allowedModels.includes(m));
  if (outside)
    return refusal(400, `model ${outside} is not allowed in workspace ${ws.name}`, CODES.modelNotAllowed, { allowedModels: ws.allowedModels });
  return null;
}
