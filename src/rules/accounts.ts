import type { AccountChoice } from "../api/engine.js";
import { CODES } from "../api/errors.js";
import type { ThreadSpec } from "../api/threads.js";
import type { RuntimeConfig } from "../platform/config.js";
import { refuse, type Refusal } from "../api/outcome.js";
import { providerOf } from "./spawn.js";

/**
 * An account a spawn (or a policy default) names must be one the host configures, of the
 * provider its model needs. With no accounts configured the simulator stands in for
 * every provider, and account names are labels.
 */
export function accountRefusal(config: RuntimeConfig, account: string | null, engine: ThreadSpec["engine"], model: string): Refusal | null {
  if (!account || config.accounts.size === 0) return null;
  const known = config.accounts.get(account);
  if (!known) return refuse(400, `no account ${account} on this host`, CODES.unknownAccount, { accounts: [...config.accounts.keys()] });
  const needed = providerOf(engine, model);
  if (known.provider !== needed)
    return refuse(400, `account ${account} is a ${known.provider} account; ${model} on ${engine} needs ${needed}`, CODES.accountProviderMismatch, {
      provider: known.provider,
      needed,
    });
  return null;
}

/**
 * The accounts a workspace's calls may run on: its roster, in order, or, for a workspace
 * without one (or no workspace), any account no other workspace claims.
 */
export function accountScope(config: RuntimeConfig, workspace: string | null): AccountChoice {
  const ws = workspace ? config.workspaces?.get(workspace) : undefined;
  if (ws && ws.accounts.length > 0) return { only: ws.accounts, exclude: [] };
  return { only: null, exclude: [...(config.workspaces?.values() ?? [])].filter((w) => w !== ws).flatMap((w) => w.accounts) };
}

/** The accounts of a scope, in the order they are tried (roster order, else the host's). */
export function scopedAccounts(config: RuntimeConfig, scope: AccountChoice): string[] {
  return (scope.only ?? [...config.accounts.keys()]).filter((id) => !scope.exclude.includes(id));
}

/**
 * The account a turn runs on, as far as the worker decides it: the thread's own when it
 * serves the turn's provider (a failover to another engine may need another provider);
 * otherwise the engine host picks within the thread's account scope.
 */
export function turnAccount(config: RuntimeConfig, spec: ThreadSpec, engine: ThreadSpec["engine"], model: string): { account: string | null; accountChoice: AccountChoice } {
  const own = spec.account && config.accounts.get(spec.account)?.provider === providerOf(engine, model) ? spec.account : null;
  return { account: own, accountChoice: accountScope(config, spec.workspace) };
}
