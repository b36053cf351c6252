import { Policy, type WorkspaceConfig } from "../api/workspaces.js";
import type { Env } from "../platform/env.js";
import { workspaceOf } from "../platform/stubs.js";

/** The policy in force: what the owner set (`PUT .../policy`), else the configured one. */
export async function policyOf(env: Env, ws: WorkspaceConfig): Promise<Policy> {
  const owned = await workspaceOf(env, ws.name).policy();
  return owned ? Policy.parse(JSON.parse(owned)) : ws.policy;
}
