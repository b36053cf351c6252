import { ACCOUNTS_TOKEN_HEADER, type AccountView } from "./api/accounts.js";
import type { Env } from "./env.js";

/** A call to the account pool binding (the front serves it), with this boot's token. */
export function accountPool(env: Env, path: string, init: RequestInit = {}): Promise<Response> {
  return env.ACCOUNTS.fetch(`https://accounts${path}`, { ...init, headers: { ...init.headers, [ACCOUNTS_TOKEN_HEADER]: env.SERVICE_ACCOUNTS_TOKEN ?? "" } });
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
