import { PROVIDER_TOKEN_URLS, type AccountConfig, type OAuthLogin } from "../../../src/api/accounts.js";
import { postJson, type Upstream } from "../proxy/upstream.js";
import type { LoginTokens, TokenStore } from "./token-store.js";

/**
 * A token this close to expiry is refreshed before use, or a quarter of its lifetime when
 * that is shorter: a provider that issues tokens for a minute must not see a refresh on
 * every call.
 */
const REFRESH_MARGIN_MS = 60_000;
/** A token refused this soon after it was issued tells of the login, not of the token. */
const FRESH_MS = 30_000;
/** When the token endpoint names no lifetime. */
const DEFAULT_LIFETIME_S = 3600;

export type TokenResult =
  | { ok: true; accessToken: string; expiresAt: number }
  /** `revoked`: the provider refused the login (a person must log in again); `unreachable`: try later. */
  | { ok: false; reason: "revoked" | "unreachable"; error: string };

/**
 * One OAuth login: hands out a current access token, refreshing it with the refresh
 * token (which never leaves this object and the token store). Concurrent callers share
 * one refresh. A rotated refresh token is kept in the token store, so the login
 * survives a restart.
 */
export class OAuthSession {
  private refreshing: Promise<TokenResult> | null = null;
  /** The provider's id for the account, as the login or a refresh named it. */
  accountId: string | null;

  constructor(
    private readonly account: AccountConfig & { oauth: OAuthLogin },
    private readonly store: TokenStore,
    private readonly upstream: Upstream,
  ) {
    this.accountId = account.oauth.accountId ?? null;
  }

  async token(): Promise<TokenResult> {
    const current = this.store.get(this.account.id, this.account.oauth);
    if (current.accessToken && current.expiresAt && current.expiresAt - margin(current) > Date.now())
      return { ok: true, accessToken: current.accessToken, expiresAt: current.expiresAt };
    this.refreshing ??= this.refresh(current.refreshToken).finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  /**
   * The provider refused `refused` before its time (revoked early, or a clock apart): the
   * next use refreshes the login instead of sending it again. `stale`: a refresh already
   * replaced it (calls made with the old token answer after the new one came), so the new
   * one stays. `fresh`: it was issued moments ago, so refreshing again would only rotate
   * the login for another refusal; it is dropped all the same.
   */
  forgetAccessToken(refused: string | undefined): "forgotten" | "fresh" | "stale" {
    const current = this.store.get(this.account.id, this.account.oauth);
    if (!current.accessToken || (refused !== undefined && refused !== current.accessToken)) return "stale";
    const fresh = current.issuedAt !== undefined && Date.now() - current.issuedAt < FRESH_MS;
    this.store.put(this.account.id, this.account.oauth, { refreshToken: current.refreshToken });
    return fresh ? "fresh" : "forgotten";
  }

  private async refresh(refreshToken: string): Promise<TokenResult> {
    const url = new URL(this.account.oauth.tokenUrl ?? PROVIDER_TOKEN_URLS[this.account.provider]);
    let answer: Awaited<ReturnType<typeof postJson>>;
    try {
      answer = await postJson(this.upstream, url, {
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        ...(this.account.oauth.clientId ? { client_id: this.account.oauth.clientId } : {}),
      });
    } catch (err) {
      return { ok: false, reason: "unreachable", error: `could not reach ${url.host} to refresh the login: ${(err as Error).message}` };
    }
    const body = (answer.json ?? {}) as { access_token?: unknown; expires_in?: unknown; refresh_token?: unknown; account_id?: unknown; account?: { uuid?: unknown } };
    if (answer.status >= 500 || answer.status === 429)
      return { ok: false, reason: "unreachable", error: `${url.host} could not refresh the login now (${answer.status})` };
    if (answer.status !== 200 || typeof body.access_token !== "string")
      return { ok: false, reason: "revoked", error: `${url.host} refused the login's refresh (${answer.status}): ${answer.text.slice(0, 200)}` };
    const lifetime = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S;
    const issuedAt = Date.now();
    const expiresAt = issuedAt + lifetime * 1000;
    const id = typeof body.account_id === "string" ? body.account_id : typeof body.account?.uuid === "string" ? body.account.uuid : null;
    if (id) this.accountId = id;
    this.store.put(this.account.id, this.account.oauth, {
      refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : refreshToken,
      accessToken: body.access_token,
      expiresAt,
      issuedAt,
    });
    return { ok: true, accessToken: body.access_token, expiresAt };
  }
}

function margin(tokens: LoginTokens): number {
  return tokens.issuedAt && tokens.expiresAt ? Math.min(REFRESH_MARGIN_MS, (tokens.expiresAt - tokens.issuedAt) / 4) : REFRESH_MARGIN_MS;
}
