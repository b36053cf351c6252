import type { AccountView } from "../api/accounts.js";
import type { ExhaustionEpisode } from "../api/operator.js";
import { accountScope, scopedAccounts } from "./accounts.js";
import type { RuntimeConfig } from "../platform/config.js";

/**
 * Open account-pool exhaustion episodes: a workspace (or the unclaimed pool) whose every
 * account of a provider is cooling down, so no call of that provider can go out.
 */
export function exhaustion(config: RuntimeConfig, views: AccountView[]): ExhaustionEpisode[] {
  const byId = new Map(views.map((v) => [v.id, v]));
  const rostered = [...(config.workspaces?.values() ?? [])].filter((w) => w.accounts.length > 0).map((w) => w.name as string | null);
  const pools = [...rostered, null].map((workspace) => ({ workspace, ids: scopedAccounts(config, accountScope(config, workspace)) }));
  return pools.flatMap(({ workspace, ids }) => {
    const members = ids.map((id) => byId.get(id)).filter((v): v is AccountView => v !== undefined);
    const providers = [...new Set(members.map((m) => m.identity.provider))];
    return providers.flatMap((provider) => {
      const of = members.filter((m) => m.identity.provider === provider);
      if (!of.every((m) => m.health.coolingDownUntil)) return [];
      return [
        {
          workspace,
          provider,
          accounts: of.map((m) => ({ id: m.id, lastFailureClass: m.health.lastFailureClass, coolingDownUntil: m.health.coolingDownUntil })),
          since: of.map((m) => m.health.lastFailureAt).filter((at): at is string => at !== null).sort().at(-1) ?? null,
          until: of.map((m) => m.health.coolingDownUntil!).sort()[0]!,
        },
      ];
    });
  });
}

