import { ACCOUNTS_TOKEN_HEADER, ModelCatalogAnswer, type AccountView } from "../api/accounts.js";
import { CODES } from "../api/errors.js";
import { ACCOUNT_POOL_NOT_CONNECTED, bindingAnswer } from "./binding-answer.js";
import type { Env } from "./env.js";

/**
 * A call to the account pool binding (the front serves it), with this boot's token. With
 * no pool behind the binding (plain `wrangler dev`), a JSON 503 `account-pool-unavailable`
 * that says how to run with one.
 */
export async function accountPool(env: Env, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await env.ACCOUNTS.fetch(`https://accounts${path}`, { ...init, headers: { ...init.headers, [ACCOUNTS_TOKEN_HEADER]: env.SERVICE_ACCOUNTS_TOKEN ?? "" } });
  return bindingAnswer(res, { error: ACCOUNT_POOL_NOT_CONNECTED, code: CODES.accountPoolUnavailable });
}

/** The accounts with health and identity, and whether the simulator answers every call; null when the pool does not answer. */
export async function accountPoolState(env: Env): Promise<{ accounts: AccountView[]; simulator: boolean } | null> {
  try {
    const res = await accountPool(env, "/accounts");
    if (!res.ok) return null;
    return (await res.json()) as { accounts: AccountView[]; simulator: boolean };
  } catch {
    return null;
  }
}

export async function accountViews(env: Env): Promise<AccountView[] | null> {
  return (await accountPoolState(env))?.accounts ?? null;
}

/**
 * Kept once the front answered: whether the simulator stands in, and what it serves, is
 * decided when the front starts, and workerd starts with it, so a spawn need not ask again.
 */
let catalog: ModelCatalogAnswer | null = null;

/** Which model ids exist, asked of the front once; null when no pool answers (plain `wrangler dev`): then nothing can be known, and nothing is refused. */
export async function modelCatalog(env: Env): Promise<ModelCatalogAnswer | null> {
  if (catalog) return catalog;
  try {
    const res = await accountPool(env, "/catalog");
    if (!res.ok) return null;
    const parsed = ModelCatalogAnswer.safeParse(await res.json());
    if (parsed.success) catalog = parsed.data;
    return catalog;
  } catch {
    return null;
  }
}
