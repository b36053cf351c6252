import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** Credentials a simulator standing in for the real providers accepts (SERVICE_PROVIDER_UPSTREAM=simulator). */
export interface CredentialSet {
  /** API key -> the organization id the provider would name for it. */
  apiKeys: Record<string, string>;
  /** OAuth refresh token -> the provider's account id; a refresh token not listed is a revoked login. */
  refreshTokens: Record<string, string>;
  /** Lifetime of the access tokens it issues, in seconds. */
  accessTokenSeconds?: number;
}

/**
 * Checks keys the way a provider does: an unknown key (a placeholder sent without the
 * credential proxy, say) is refused with 401; a known one is answered with the
 * organization header the provider would send. Refresh tokens get access tokens at
 * the OAuth token path, which this set then accepts.
 */
export class SimCredentials {
  private readonly accessTokens = new Map<string, string>();

  constructor(private readonly set: CredentialSet) {}

  /** The organization behind the request's credential, or null if the provider would refuse it. */
  check(headers: IncomingHttpHeaders): string | null {
    const auth = headers.authorization ?? "";
    const offered = /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, "") : typeof headers["x-api-key"] === "string" ? headers["x-api-key"] : "";
    return this.set.apiKeys[offered] ?? this.accessTokens.get(offered) ?? null;
  }

  /** The OAuth token endpoint: `grant_type=refresh_token` (JSON or form body). */
  refresh(body: string, contentType: string | undefined): { status: number; body: unknown } {
    let fields: Record<string, unknown> = {};
    try {
      fields = contentType?.includes("json") ? (JSON.parse(body) as Record<string, unknown>) : Object.fromEntries(new URLSearchParams(body));
    } catch {
      return { status: 400, body: { error: "invalid_request", error_description: "body is not valid JSON" } };
    }
    if (fields.grant_type !== "refresh_token" || typeof fields.refresh_token !== "string")
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "only refresh_token is supported" } };
    const accountId = this.set.refreshTokens[fields.refresh_token];
    if (!accountId) return { status: 400, body: { error: "invalid_grant", error_description: "refresh token is invalid or revoked" } };
    const accessToken = `sim-at-${randomBytes(12).toString("hex")}`;
    this.accessTokens.set(accessToken, accountId);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: this.set.accessTokenSeconds ?? 3600,
        refresh_token: fields.refresh_token,
        account_id: accountId,
      },
    };
  }
}
