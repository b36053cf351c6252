/**
 * The account pool: provider accounts the operator configures on the host
 * (`accounts.json`), and what routes may show of them. Secrets (API keys, access and
 * refresh tokens) exist only in the front's pool and in the credential proxy.
 */
import * as z from "zod";
import { FAILURE_CLASSES } from "./engine.js";
import { EngineEntry } from "./engines.js";
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
  .refine((u) => /^https:/.test(u) || /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/.test(u), "must be https (or http on loopback)")
  // A client's errors repeat the address it called: a credential in it would reach answers and logs.
  .refine((u) => {
    try {
      const url = new URL(u);
      return url.username === "" && url.password === "";
    } catch {
      return false;
    }
  }, "must not hold a user name or password (a key or token belongs in its own field)");

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

/** Where the code host's API is when a code-host account names no `baseUrl`. */
export const GITHUB_API_URL = "https://api.github.com";

/**
 * A code-host account (`provider: "github"`): a token the front's code-host client sends,
 * which no route, worker or session ever sees. `owners` names the owners (users or
 * organisations) it is for; an account without `owners` serves every owner.
 */
export const CodeHostAccount = z
  .object({
    id: Name,
    provider: z.literal("github"),
    label: z.string().min(1).max(200).optional(),
    token: z.string().min(1).max(4096),
    baseUrl: httpsOrLoopback.optional(),
    owners: z.array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, "an owner is letters, digits and -")).default([]),
  })
  .strict();
export type CodeHostAccount = z.infer<typeof CodeHostAccount>;

/**
 * `accounts.json`: one list, each entry read by its `provider`, so a bad entry is named by
 * its own fields rather than by every kind it failed to be.
 */
export const AccountsFile = z
  .object({ accounts: z.array(z.looseObject({ provider: z.unknown() })) })
  .strict()
  .transform((f, ctx) => {
    const accounts: AccountConfig[] = [];
    const codeHosts: CodeHostAccount[] = [];
    f.accounts.forEach((entry, i) => {
      const parsed = entry.provider === "github" ? CodeHostAccount.safeParse(entry) : AccountConfig.safeParse(entry);
      if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: ["accounts", i, ...issue.path] });
      else if (parsed.data.provider === "github") codeHosts.push(parsed.data);
      else accounts.push(parsed.data);
    });
    const ids = [...accounts, ...codeHosts].map((a) => a.id);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: "custom", message: "account ids must be unique", path: ["accounts"] });
    return { accounts, codeHosts };
  });
export type AccountsFile = z.infer<typeof AccountsFile>;

/** What the worker knows of an account: enough to check spawns and pick one, no secret. */
export interface PublicAccount {
  id: string;
  provider: Provider;
}

/** Failure classes an account's health can show; `proxy-unreachable` is the proxy failing to reach the provider, not the provider refusing. */
export const ACCOUNT_FAILURE_CLASSES = [...FAILURE_CLASSES, "proxy-unreachable", "rate-limit"] as const;
export type AccountFailureClass = (typeof ACCOUNT_FAILURE_CLASSES)[number];

export const AccountHealth = z.object({
  lastSuccessAt: z.string().nullable(),
  lastFailureAt: z.string().nullable(),
  lastFailureClass: z.enum(ACCOUNT_FAILURE_CLASSES).nullable(),
  lastFailure: z.string().nullable(),
  /** While set and in the future, the pool skips the account when it picks one. */
  coolingDownUntil: z.string().nullable(),
});
export type AccountHealth = z.infer<typeof AccountHealth>;

export const AccountIdentity = z.object({
  provider: z.enum(PROVIDERS),
  label: z.string(),
  kind: z.enum(["api-key", "oauth"]),
  /** The provider's own id for the account (organization id), once a response or the login named it. */
  accountId: z.string().nullable(),
});
export type AccountIdentity = z.infer<typeof AccountIdentity>;

/** Classes of a provider's refusal of one model for one account (src/api/engine.ts). */
export const MODEL_REFUSAL_CLASSES = ["model-not-found", "unsupported-model"] as const;

/**
 * A model the provider refused this account (a turn failed `model-not-found` or
 * `unsupported-model` on it): the pool picks another account of the provider for turns of
 * that model until an operator clears it, or a turn of that model succeeds on the account.
 */
export const ModelRefusal = z.object({
  model: z.string(),
  class: z.enum(MODEL_REFUSAL_CLASSES),
  /** When the provider last refused it. */
  at: z.string(),
  /** The refusal as the engine reported it, cut to 300 characters. */
  message: z.string(),
});
export type ModelRefusal = z.infer<typeof ModelRefusal>;

/**
 * The account's allowance for engine_b (codex: a ChatGPT plan's usage limit, or API
 * credit). `spent` once an engine_b turn on it failed because the provider said the
 * allowance is spent; engine_b turns are not placed on it again until an operator resets
 * it (`POST /accounts/:id/engine-b/credit-reset`) or an engine_b turn succeeds on it.
 */
export const EngineBCredit = z.object({
  state: z.enum(["available", "spent"]),
  /** When an engine_b turn last found it spent; null while available. */
  spentAt: z.string().nullable(),
  /** What the provider said, cut to 300 characters; null while available. */
  message: z.string().nullable(),
  /** When an operator last reset it, or null. */
  resetAt: z.string().nullable(),
});
export type EngineBCredit = z.infer<typeof EngineBCredit>;

/** One entry of `GET /accounts`. */
export const AccountView = z.object({
  id: z.string(),
  identity: AccountIdentity,
  health: AccountHealth,
  /** Models the provider refused this account, newest first. */
  modelRefusals: z.array(ModelRefusal),
  engineBCredit: EngineBCredit,
});
export type AccountView = z.infer<typeof AccountView>;

/** `GET /accounts`: the accounts, whether the provider simulator stands in for the providers, and the engines' CLIs. */
export const AccountList = z.object({ accounts: z.array(AccountView), simulator: z.boolean(), engines: z.array(EngineEntry) });

/** `POST /accounts/:id/access-token`. */
export const AccessToken = z.object({ account: z.string(), tokenType: z.literal("Bearer"), accessToken: z.string(), expiresAt: z.string() });
export type AccessToken = z.infer<typeof AccessToken>;

/** `POST /accounts/:id/engine-b/credit-reset`: `reset` false when the allowance was not marked spent (nothing changed). */
export const EngineBCreditReset = z.object({ account: z.string(), reset: z.boolean(), engineBCredit: EngineBCredit });
export type EngineBCreditReset = z.infer<typeof EngineBCreditReset>;

/** `DELETE /accounts/:id/model-refusals/:model`: the refusal it cleared. */
export const ModelRefusalCleared = z.object({ account: z.string(), cleared: ModelRefusal });
export type ModelRefusalCleared = z.infer<typeof ModelRefusalCleared>;

/** The header the worker sends its per-boot token in to the account pool. */
export const ACCOUNTS_TOKEN_HEADER = "x-service-accounts";

/**
 * The account pool's `GET /catalog`: which model ids exist, where the runtime can know.
 * `closed` while the provider simulator stands in for the providers (no account, or
 * `SERVICE_SIMULATOR=on`): every model call goes to it, so `models`, the ids it serves,
 * are all there are. With real accounts only a provider knows its catalog: not closed,
 * no ids, and nothing is refused before the provider says so.
 */
export const ModelCatalogAnswer = z.object({ closed: z.boolean(), models: z.array(z.string()) });
export type ModelCatalogAnswer = z.infer<typeof ModelCatalogAnswer>;
