/**
 * The account pool: provider accounts the operator configures on the host
 * (`accounts.json`), and what routes may show of them. Secrets (API keys, access and
 * refresh tokens) exist only in the front's pool and in the credential proxy.
 */
import { z } from "zod";
import type { FailureClass } from "./engine.js";
import { Name } from "./threads.js";

export const PROVIDERS = ["openai", "anthropic"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Where each provider is reached when an account names no `baseUrl`. */
export const PROVIDER_BASE_URLS: Record<Provider, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

/** Where an OAuth login is refreshed when the account names no `tokenUrl`. */
export const PROVIDER_TOKEN_URLS: Record<Provider, string> = {
  openai: "https://auth.openai.com/oauth/token",
  anthropic: "https://console.anthropic.com/v1/oauth/token",
};

const httpsOrLoopback = z
  .string()
  .url()
  .refine((u) => /^https:/.test(u) || /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/.test(u), "must be https (or http on loopback)");

export const OAuthLogin = z
  .object({
    refreshToken: z.string().min(1),
    /** A current access token, if the login step left one; refreshed when it expires. */
    accessToken: z.string().min(1).optional(),
    /** Epoch ms when `accessToken` expires. */
    expiresAt: z.number().int().positive().optional(),
    tokenUrl: httpsOrLoopback.optional(),
    clientId: z.string().min(1).optional(),
    /** The provider's own id for the account, when the login step learned it. */
    accountId: z.string().min(1).optional(),
  })
  .strict();
export type OAuthLogin = z.infer<typeof OAuthLogin>;

export const AccountConfig = z
  .object({
    id: Name,
    provider: z.enum(PROVIDERS),
    label: z.string().min(1).max(200).optional(),
    apiKey: z.string().min(1).optional(),
    oauth: OAuthLogin.optional(),
    baseUrl: httpsOrLoopback.optional(),
  })
  .strict()
  .refine((a) => (a.apiKey === undefined) !== (a.oauth === undefined), "an account has exactly one of apiKey or oauth");
export type AccountConfig = z.infer<typeof AccountConfig>;

export const AccountsFile = z
  .object({ accounts: z.array(AccountConfig) })
  .strict()
  .refine((f) => new Set(f.accounts.map((a) => a.id)).size === f.accounts.length, "account ids must be unique");
export type AccountsFile = z.infer<typeof AccountsFile>;

/** What the worker knows of an account: enough to check spawns and pick one, no secret. */
export interface PublicAccount {
  id: string;
  provider: Provider;
}

/** Failure classes an account's health can show; `proxy-unreachable` is the proxy failing to reach the provider, not the provider refusing. */
export type AccountFailureClass = FailureClass | "proxy-unreachable" | "rate-limit";

export interface AccountHealth {
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastFailureClass: AccountFailureClass | null;
  lastFailure: string | null;
  /** While set and in the future, the pool skips the account when it picks one. */
  coolingDownUntil: string | null;
}

export interface AccountIdentity {
  provider: Provider;
  label: string;
  kind: "api-key" | "oauth";
  /** The provider's own id for the account (organization id), once a response or the login named it. */
  accountId: string | null;
}

/** One entry of `GET /accounts`. */
export interface AccountView {
  id: string;
  identity: AccountIdentity;
  health: AccountHealth;
}

/** `POST /accounts/:id/access-token`. */
export interface AccessToken {
  account: string;
  tokenType: "Bearer";
  accessToken: string;
  expiresAt: string;
}

/** The header the worker sends its per-boot token in to the account pool. */
export const ACCOUNTS_TOKEN_HEADER = "x-service-accounts";
