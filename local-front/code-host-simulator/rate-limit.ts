/**
 * GitHub's primary rate limit: 5,000 requests an hour per token, reported on every answer.
 * Tests can also shut a token (or every token) out until a given time, to see a client
 * back off the way it must against the real API.
 */
import { GitHubError } from "./errors.js";

const LIMIT = 5000;
const WINDOW_MS = 60 * 60 * 1000;

interface Window {
  resetAt: number;
  used: number;
}

export interface Quota {
  limit: number;
  used: number;
  remaining: number;
  /** Epoch seconds, as GitHub reports it. */
  reset: number;
}

export class RateLimits {
  readonly #windows = new Map<string, Window>();
  /** Token (or "*") → epoch ms until which it is refused. */
  readonly #shut = new Map<string, number>();

  shut(token: string, untilMs: number): void {
    this.#shut.set(token, untilMs);
  }

  quota(token: string, now = Date.now()): Quota {
    const window = this.#window(token, now);
    const until = this.#shutUntil(token, now);
    if (until !== null) return { limit: LIMIT, used: window.used, remaining: 0, reset: Math.ceil(until / 1000) };
    return { limit: LIMIT, used: window.used, remaining: Math.max(0, LIMIT - window.used), reset: Math.ceil(window.resetAt / 1000) };
  }

  /**
   * Counts one request against `token` and answers the headers to send with it, or throws
   * GitHub's refusal when the token is shut out or has spent its hour.
   */
  take(token: string, userId: number, now = Date.now()): Record<string, string> {
    const window = this.#window(token, now);
    const until = this.#shutUntil(token, now) ?? (window.used >= LIMIT ? window.resetAt : null);
    if (until !== null) {
      const headers = headersOf({ limit: LIMIT, used: window.used, remaining: 0, reset: Math.ceil(until / 1000) });
      headers["retry-after"] = String(Math.max(1, Math.ceil((until - now) / 1000)));
      throw new GitHubError(403, `API rate limit exceeded for user ID ${userId}.`, {}, headers);
    }
    window.used++;
    return headersOf(this.quota(token, now));
  }

  #window(token: string, now: number): Window {
    let window = this.#windows.get(token);
    if (!window || window.resetAt <= now) this.#windows.set(token, (window = { resetAt: now + WINDOW_MS, used: 0 }));
    return window;
  }

  #shutUntil(token: string, now: number): number | null {
    const until = Math.max(this.#shut.get(token) ?? 0, this.#shut.get("*") ?? 0);
    return until > now ? until : null;
  }
}

export function headersOf(q: Quota): Record<string, string> {
  return {
    "x-ratelimit-limit": String(q.limit),
    "x-ratelimit-remaining": String(q.remaining),
    "x-ratelimit-reset": String(q.reset),
    "x-ratelimit-used": String(q.used),
    "x-ratelimit-resource": "core",
  };
}
