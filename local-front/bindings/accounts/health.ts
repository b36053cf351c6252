import type { AccountFailureClass, AccountHealth } from "../../../src/api/accounts.js";

/** How long an account rests after a rate limit that named no wait. */
const DEFAULT_COOLDOWN_MS = 60_000;
/** How long an account whose credential was refused is passed over when one is picked. */
const AUTH_COOLDOWN_MS = 5 * 60_000;
/** What a provider says when an allowance is spent (Anthropic says it in a 400: "credit balance is too low"). */
export const SPENT = /quota|insufficient|billing|credit balance/i;
/** Error bodies are kept this long in the health record: enough to recognise, never a whole transcript. */
const MESSAGE_LIMIT = 300;

/**
 * One account's health, as the proxy and the pool see its calls: the last success, the
 * last failure and its class, and a cool-down after rate limits.
 */
export class Health {
  private state: AccountHealth = { lastSuccessAt: null, lastFailureAt: null, lastFailureClass: null, lastFailure: null, coolingDownUntil: null };

  view(): AccountHealth {
    const until = this.state.coolingDownUntil;
    return { ...this.state, coolingDownUntil: until && Date.parse(until) > Date.now() ? until : null };
  }

  coolingDown(now = Date.now()): boolean {
    return this.state.coolingDownUntil !== null && Date.parse(this.state.coolingDownUntil) > now;
  }

  lastFailureClass(): AccountFailureClass | null {
    return this.state.lastFailureClass;
  }

  /** Epoch ms the cool-down ends, or 0. */
  coolingUntil(): number {
    return this.state.coolingDownUntil ? Date.parse(this.state.coolingDownUntil) : 0;
  }

  success(): void {
    this.state.lastSuccessAt = new Date().toISOString();
    this.state.coolingDownUntil = null;
  }

  /** Ends a cool-down early: an operator says what caused it is over (credit bought). */
  rested(): void {
    this.state.coolingDownUntil = null;
  }

  failure(cls: AccountFailureClass, message: string, coolForMs?: number): void {
    this.state.lastFailureAt = new Date().toISOString();
    this.state.lastFailureClass = cls;
    this.state.lastFailure = clip(message);
    if (coolForMs !== undefined) this.state.coolingDownUntil = new Date(Date.now() + coolForMs).toISOString();
  }

  /** The provider refused the account's credential (a 401, or a refresh it turned down). */
  refused(message: string): void {
    this.failure("auth", message, AUTH_COOLDOWN_MS);
  }

  /**
   * A provider's answer: 2xx is a success; 401/403 a refused login; 402 or a 429 about
   * quota a spent allowance; any other 429 a rate limit. Both 429s cool the account
   * down for `retry-after` (seconds or an HTTP date), a minute when the provider named
   * no wait. Other statuses say nothing about the account.
   */
  response(status: number, retryAfter: string | undefined, body: string): void {
    if (status >= 200 && status < 300) return this.success();
    const summary = `provider answered ${status}${body ? `: ${body.replace(/\s+/g, " ").trim()}` : ""}`;
    if (status === 401) return this.refused(summary);
    // A 403 can be one model or endpoint this login may not use: noted, but the account stays in use.
    if (status === 403) return this.failure("auth", summary);
    if (status === 402 || (status === 400 && SPENT.test(body))) return this.failure("quota", summary, retryMs(retryAfter));
    if (status === 429) return this.failure(SPENT.test(body) ? "quota" : "rate-limit", summary, retryMs(retryAfter));
  }
}

/** A provider's words as the pool keeps them: enough to recognise, never a whole transcript. */
export function clip(message: string): string {
  return message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message;
}

export function retryMs(retryAfter: string | undefined): number {
  if (!retryAfter) return DEFAULT_COOLDOWN_MS;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(retryAfter);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : DEFAULT_COOLDOWN_MS;
}
