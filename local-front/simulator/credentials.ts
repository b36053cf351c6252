import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { IncomingHttpHeaders } from "node:http";
import type { Provider } from "../../src/api/accounts.js";

/** Credentials a simulator standing in for the real providers accepts (SERVICE_PROVIDER_UPSTREAM=simulator). */
export interface CredentialSet {
  /** API key -> the provider that issued it and the organization it names for it. */
  apiKeys: Record<string, { provider: Provider; org: string }>;
  /** OAuth refresh token -> the provider's account id; a refresh token not listed is a revoked login. */
  refreshTokens: Record<string, { provider: Provider; accountId: string }>;
  /** Host name -> the provider answering there (its API and its OAuth token endpoint). */
  hosts: Record<string, Provider>;
  /** Lifetime of the access tokens it issues, in seconds. */
  accessTokenSeconds?: number;
  /**
   * Where it keeps the refresh tokens it issued and retired, as a provider keeps them in
   * its database: a login rotated before a restart stays rotated after it.
   */
  stateFile?: string;
}

type Login = { provider: Provider; accountId: string };

/** What a provider remembers of its logins' rotations. */
interface Rotations {
  issued: Record<string, Login>;
  retired: string[];
}

/** A credential the simulator accepts, and what it belongs to. */
export interface Holder {
  provider: Provider;
  org: string;
}

/**
 * Checks keys the way the providers do: each provider knows only the keys and tokens it
 * issued, so an unknown key, or one sent to the other provider, is refused with 401; a
 * known one is answered with the organization header the provider would send. Refresh
 * tokens get access tokens at the OAuth token path, and rotate as the providers' do: each
 * refresh issues a new refresh token and the one it used stops working.
 */
export class SimCredentials {
  /** Each access token it issued, and when it stops being accepted. */
  private readonly accessTokens = new Map<string, Holder & { expiresAt: number }>();
  private readonly refreshTokens: Map<string, Login>;
  private readonly rotations: Rotations;

  constructor(private readonly set: CredentialSet) {
    this.rotations = set.stateFile && existsSync(set.stateFile) ? (JSON.parse(readFileSync(set.stateFile, "utf8")) as Rotations) : { issued: {}, retired: [] };
    this.refreshTokens = new Map(Object.entries({ ...set.refreshTokens, ...this.rotations.issued }));
    for (const used of this.rotations.retired) this.refreshTokens.delete(used);
  }

  private rotate(used: string, login: Login): string {
    const next = `sim-rt-${randomBytes(12).toString("hex")}`;
    this.refreshTokens.delete(used);
    this.refreshTokens.set(next, login);
    delete this.rotations.issued[used];
    this.rotations.issued[next] = login;
    this.rotations.retired.push(used);
    const file = this.set.stateFile;
    if (file) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(this.rotations), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    }
    return next;
  }

  /** The provider answering at `host` (a `Host` header), or null for a host it does not stand in for. */
  providerAt(host: string | undefined): Provider | null {
    const name = (host ?? "").replace(/:\d+$/, "").toLowerCase();
    return this.set.hosts[name] ?? null;
  }

  /**
   * Who holds the request's credential, if `provider` issued it; `expired` for an access
   * token past its `expires_in`, which the providers refuse as they refuse any bad token,
   * so a client that does not refresh on time fails here as it would there.
   */
  check(headers: IncomingHttpHeaders, provider: Provider | null): Holder | "expired" | null {
    const auth = headers.authorization ?? "";
    const offered = /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, "") : typeof headers["x-api-key"] === "string" ? headers["x-api-key"] : "";
    const token = this.accessTokens.get(offered);
    // Kept once expired, as a provider knows the tokens it issued: each use is told it expired.
    if (token && token.expiresAt <= Date.now()) return provider === null || token.provider === provider ? "expired" : null;
    const holder = this.set.apiKeys[offered] ?? token ?? null;
    return holder && (provider === null || holder.provider === provider) ? { provider: holder.provider, org: holder.org } : null;
  }

  /** The OAuth token endpoint: `grant_type=refresh_token` (JSON or form body). */
  refresh(body: string, contentType: string | undefined, provider: Provider | null): { status: number; body: unknown } {
    let fields: Record<string, unknown> = {};
    try {
      fields = contentType?.includes("json") ? (JSON.parse(body) as Record<string, unknown>) : Object.fromEntries(new URLSearchParams(body));
    } catch {
      return { status: 400, body: { error: "invalid_request", error_description: "body is not valid JSON" } };
    }
    if (fields.grant_type !== "refresh_token" || typeof fields.refresh_token !== "string")
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "only refresh_token is supported" } };
    const login = this.refreshTokens.get(fields.refresh_token);
    if (!login || (provider !== null && login.provider !== provider)) return { status: 400, body: { error: "invalid_grant", error_description: "refresh token is invalid or revoked" } };
    const refreshToken = this.rotate(fields.refresh_token, login);
    const accessToken = `sim-at-${randomBytes(12).toString("hex")}`;
    const lifetime = this.set.accessTokenSeconds ?? 3600;
    this.accessTokens.set(accessToken, { provider: login.provider, org: login.accountId, expiresAt: Date.now() + lifetime * 1000 });
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: lifetime,
        refresh_token: refreshToken,
        account_id: login.accountId,
      },
    };
  }
}
