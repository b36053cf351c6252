import {
  PROVIDER_BASE_URLS,
  type AccountFailureClass,
  type EngineBCredit,
  type EngineBCreditReset,
  type ModelRefusal,
  type ModelRefusalCleared,
  PROVIDER_TOKEN_URLS,
  type AccessToken,
  type AccountConfig,
  type AccountView,
  type Provider,
  type PublicAccount,
} from "../../../src/api/accounts.js";
import type { TurnFailure } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import type { Engine } from "../../../src/api/threads.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { MinuteBudget } from "../../../src/shared/minute-budget.js";
import type { Upstream } from "../proxy/upstream.js";
import { clip, Health, SPENT } from "./health.js";
import { OAuthSession } from "./oauth.js";
import type { TokenStore } from "./token-store.js";

export interface Credential {
  kind: "api-key" | "oauth";
  secret: string;
}

export type CredentialResult = { ok: true; credential: Credential; expiresAt: number | null } | { ok: false; reason: "revoked" | "unreachable"; error: string };

/** The access-token route's answer: the status and body the worker passes on. */

interface Pooled {
  config: AccountConfig;
  health: Health;
  oauth: OAuthSession | null;
  /** The provider's id for the account, learned from its responses. */
  seenId: string | null;
  /** Access-token attempts in the last minute. */
  attempts: MinuteBudget;
  /** Models the provider refused this account, by model id. */
  refusals: Map<string, ModelRefusal>;
  engineBCredit: EngineBCredit;
}

/** What a session is placed for: the pool passes over accounts that refused its model, and, for engine_b, whose allowance is spent. */
export interface Placement {
  provider: Provider;
  engine: Engine;
  model: string;
  /** The accounts it may run on, in order; null: any. */
  only: string[] | null;
  exclude: string[];
}

const AVAILABLE: EngineBCredit = { state: "available", spentAt: null, message: null, resetAt: null };

/** An engine_b failure that says the allowance is spent, where the proxy did not see the answer (proxy off, or a `proxyEnv`). */
const SPENT_TEXT = new RegExp(`${SPENT.source}|usage limit`, "i");

/** Response headers in which providers name the organization behind a key. */
const IDENTITY_HEADERS = ["openai-organization", "anthropic-organization-id"];

/**
 * The host's provider accounts and everything secret about them. Nothing here leaves
 * the front except through the credential proxy (to the provider) and the access-token
 * route (a short-lived token, never a refresh token or an API key).
 */
export class AccountPool {
  private readonly accounts = new Map<string, Pooled>();

  constructor(
    configs: AccountConfig[],
    store: TokenStore,
    upstream: Upstream,
    private readonly accessTokensPerMinute: number,
  ) {
    for (const config of configs)
      this.accounts.set(config.id, {
        config,
        health: new Health(),
        oauth: config.oauth ? new OAuthSession({ ...config, oauth: config.oauth }, store, upstream) : null,
        seenId: null,
        attempts: new MinuteBudget(accessTokensPerMinute),
        refusals: new Map(),
        engineBCredit: AVAILABLE,
      });
  }

  get size(): number {
    return this.accounts.size;
  }

  has(id: string): boolean {
    return this.accounts.has(id);
  }

  /** What the worker may know: ids and providers. */
  public(): PublicAccount[] {
    return [...this.accounts.values()].map((a) => ({ id: a.config.id, provider: a.config.provider }));
  }

  provider(id: string): Provider {
    return this.must(id).config.provider;
  }

  baseUrl(id: string): string {
    return (this.must(id).config.baseUrl ?? PROVIDER_BASE_URLS[this.must(id).config.provider]).replace(/\/$/, "");
  }

  coolingDown(id: string): boolean {
    return this.must(id).health.coolingDown();
  }

  /** Epoch ms the account's cool-down ends, or 0. */
  coolingUntil(id: string): number {
    return this.must(id).health.coolingUntil();
  }

  lastFailureClass(id: string): AccountFailureClass | null {
    return this.must(id).health.lastFailureClass();
  }

  /** The origins an account's credential may be sent to: its provider's address and its login's token endpoint. */
  origins(id: string): string[] {
    const { config } = this.must(id);
    const out = [new URL(this.baseUrl(id)).origin];
    if (config.oauth) out.push(new URL(config.oauth.tokenUrl ?? PROVIDER_TOKEN_URLS[config.provider]).origin);
    return out;
  }

  /** Every host a provider call of these accounts goes to: the proxy intercepts these. */
  hosts(): Set<string> {
    const hosts = new Set(Object.values(PROVIDER_BASE_URLS).map((u) => new URL(u).hostname));
    for (const { config } of this.accounts.values()) {
      hosts.add(new URL(this.baseUrl(config.id)).hostname);
      if (config.oauth) hosts.add(new URL(config.oauth.tokenUrl ?? PROVIDER_TOKEN_URLS[config.provider]).hostname);
    }
    return hosts;
  }

  views(): AccountView[] {
    return [...this.accounts.values()].map((a) => ({
      id: a.config.id,
      identity: {
        provider: a.config.provider,
        label: a.config.label ?? a.config.id,
        kind: a.oauth ? "oauth" : "api-key",
        accountId: a.oauth?.accountId ?? a.seenId,
      },
      health: a.health.view(),
      modelRefusals: [...a.refusals.values()].sort((x, y) => y.at.localeCompare(x.at)),
      engineBCredit: a.engineBCredit,
    }));
  }

  /**
   * The account a session runs on: the first of `only` (in its order; all accounts when
   * null) that serves the provider, is not in `exclude`, holds no refusal of the model
   * and, for engine_b, has not spent its allowance, and is not cooling down; if every such
   * account is cooling down, the one that comes back first. Null when no account of the
   * provider is in scope; a failure when every one is passed over for a refusal or a spent
   * allowance, saying which and how an operator clears it.
   */
  pick(p: Placement): { account: string } | { failure: TurnFailure } | null {
    const candidates = (p.only ?? [...this.accounts.keys()])
      .map((id) => this.accounts.get(id))
      .filter((a): a is Pooled => a !== undefined && a.config.provider === p.provider && !p.exclude.includes(a.config.id));
    if (candidates.length === 0) return null;
    const spent = (a: Pooled) => p.engine === "engine_b" && a.engineBCredit.state === "spent";
    const usable = candidates.filter((a) => !a.refusals.has(p.model) && !spent(a));
    if (usable.length === 0) return { failure: passedOver(p, candidates.map((a) => ({ id: a.config.id, refusal: a.refusals.get(p.model) ?? null, spent: spent(a) }))) };
    const ready = usable.find((a) => !a.health.coolingDown());
    if (ready) return { account: ready.config.id };
    return { account: usable.sort((x, y) => x.health.coolingUntil() - y.health.coolingUntil())[0]!.config.id };
  }

  /**
   * How a turn on `id` ended, as it concerns the account: a refused model is recorded
   * against it; an engine_b turn the provider refused for a spent allowance marks its
   * engine_b credit spent; a turn that ran clears both for its model and engine, since the
   * provider has just served them.
   */
  turnEnded(id: string, engine: Engine, model: string, failure: TurnFailure | null): void {
    const account = this.accounts.get(id);
    if (!account) return;
    if (failure === null) {
      account.refusals.delete(model);
      if (engine === "engine_b" && account.engineBCredit.state === "spent") account.engineBCredit = { ...AVAILABLE, resetAt: account.engineBCredit.resetAt };
      return;
    }
    if (failure.class === "model-not-found" || failure.class === "unsupported-model") {
      account.refusals.set(model, { model, class: failure.class, at: new Date().toISOString(), message: clip(failure.error) });
      return;
    }
    const seen = account.health.lastFailureClass();
    const spent = failure.class === "quota" && (seen === "quota" || (seen !== "rate-limit" && SPENT_TEXT.test(failure.error)));
    if (engine === "engine_b" && spent) account.engineBCredit = { state: "spent", spentAt: new Date().toISOString(), message: clip(failure.error), resetAt: account.engineBCredit.resetAt };
  }

  /** An operator's reset of the account's engine_b allowance (after buying credit): the next engine_b turn may run on it at once. */
  resetEngineBCredit(id: string): Outcome<EngineBCreditReset> {
    const account = this.accounts.get(id);
    if (!account) return refuse(404, `no account ${id}`, CODES.accountNotFound);
    const reset = account.engineBCredit.state === "spent";
    if (reset) {
      account.engineBCredit = { ...AVAILABLE, resetAt: new Date().toISOString() };
      // The spent answer cooled the account down too; the operator says it can pay now.
      if (account.health.lastFailureClass() === "quota") account.health.rested();
    }
    return ok({ account: id, reset, engineBCredit: account.engineBCredit });
  }

  /** An operator's clearing of a model's refusal on the account: turns of that model may run on it again. */
  clearModelRefusal(id: string, model: string): Outcome<ModelRefusalCleared> {
    const account = this.accounts.get(id);
    if (!account) return refuse(404, `no account ${id}`, CODES.accountNotFound);
    const refusal = account.refusals.get(model);
    if (!refusal)
      return refuse(404, `account ${id} holds no refusal of model ${JSON.stringify(model)}`, CODES.modelRefusalNotFound, { refused: [...account.refusals.keys()] });
    account.refusals.delete(model);
    return ok({ account: id, cleared: refusal });
  }

  async credential(id: string): Promise<CredentialResult> {
    const account = this.must(id);
    if (!account.oauth) return { ok: true, credential: { kind: "api-key", secret: account.config.apiKey! }, expiresAt: null };
    const token = await account.oauth.token();
    if (!token.ok) {
      if (token.reason === "revoked") account.health.refused(token.error);
      else account.health.failure("proxy-unreachable", token.error);
      return token;
    }
    return { ok: true, credential: { kind: "oauth", secret: token.accessToken }, expiresAt: token.expiresAt };
  }

  /** A provider's answer to a call on `id`, made with `sent` (the credential the call carried). */
  response(id: string, status: number, headers: Record<string, string | string[] | undefined>, body: string, sent?: string): void {
    const account = this.accounts.get(id);
    if (!account) return;
    const retryAfter = headers["retry-after"];
    // A refused access token is not a refused login: the next call refreshes. A token
    // refused as soon as it was issued is: the provider will refuse the next one too.
    const forgot = status === 401 && account.oauth ? account.oauth.forgetAccessToken(sent) : null;
    if (forgot === "forgotten") account.health.failure("auth", `provider refused the access token (${status}); the next call refreshes the login`);
    else if (forgot === null) account.health.response(status, typeof retryAfter === "string" ? retryAfter : undefined, body);
    else if (forgot === "fresh") account.health.refused(`provider refused an access token it had just issued (${status}): ${body.replace(/\s+/g, " ").trim().slice(0, 300)}`);
    for (const name of IDENTITY_HEADERS) {
      const value = headers[name];
      if (typeof value === "string" && value) account.seenId = value;
    }
  }

  /** The proxy could not reach the provider for `id`: not the account's fault, and shown apart from a refused login. */
  unreachable(id: string, error: string): void {
    this.accounts.get(id)?.health.failure("proxy-unreachable", error);
  }

  /**
   * A short-lived access token for a trusted host-side caller. API-key accounts have
   * none to give (409: the key itself never leaves the host); a login the provider
   * refused is 409 too (a person must log in again); a token endpoint that cannot be
   * reached is 503.
   */
  async issueAccessToken(id: string): Promise<Outcome<AccessToken>> {
    const account = this.accounts.get(id);
    if (!account) return refuse(404, `no account ${id}`, CODES.accountNotFound);
    // Every attempt counts, so a refused or unreachable login is not hammered through this route.
    const retryAfterS = account.attempts.take();
    if (retryAfterS !== null)
      return refuse(429, `account ${id} was asked for ${this.accessTokensPerMinute} access tokens in the last minute`, CODES.accessTokenRateLimited, undefined, {
        "retry-after": String(retryAfterS),
      });
    if (!account.oauth)
      return refuse(409, `account ${id} holds an API key, which never leaves the host; it has no short-lived tokens to issue`, CODES.credentialNotAvailable);
    const result = await this.credential(id);
    if (!result.ok)
      return result.reason === "revoked"
        ? refuse(409, `account ${id}'s login was refused by the provider; log in again: ${result.error}`, CODES.credentialNotAvailable)
        : refuse(503, result.error, CODES.credentialUnreachable, undefined, { "retry-after": "30" });
    return ok({ account: id, tokenType: "Bearer", accessToken: result.credential.secret, expiresAt: new Date(result.expiresAt!).toISOString() });
  }

  private must(id: string): Pooled {
    const account = this.accounts.get(id);
    if (!account) throw new Error(`no account ${id}`);
    return account;
  }
}

/** Why no account in scope could take a session: each one's refusal of the model, or its spent engine_b allowance. */
function passedOver(p: Placement, why: { id: string; refusal: ModelRefusal | null; spent: boolean }[]): TurnFailure {
  const reasons = why.map((w) =>
    w.refusal
      ? `${w.id} was refused ${p.model} (${w.refusal.class}, ${w.refusal.at}; DELETE /accounts/${w.id}/model-refusals/${encodeURIComponent(p.model)} clears it)`
      : `${w.id} has spent its engine_b allowance (POST /accounts/${w.id}/engine-b/credit-reset once it has credit)`,
  );
  const text = `no ${p.provider} account can take this ${p.engine} turn of ${p.model}: ${reasons.join("; ")}`;
  // Credit an operator can buy fails over to the next fallback entry, as a spent allowance does; a refused model does not.
  if (why.some((w) => w.spent)) return { class: "quota", error: text };
  return { class: why[0]!.refusal!.class, error: text };
}
