/**
 * GitHub's primary rate limit: 5,000 requests an hour per token, reported on every answer.
 * Tests can also shut a token (or every token) out until a given time, as GitHub does:
 * by the primary limit (the headers say none remain and when they reset; no Retry-After)
 * or by a secondary limit (a message saying so, with Retry-After), to see a client back
 * off the way it must against the real API.
 */
import { GitHubError } from "./errors.js";

const LIMIT = 5000;
const WINDOW_MS = 60 * 60 * 1000;

interface Window {
  resetAt: number;
  used: number;
}

/** Which of GitHub's limits shuts a token out. */
export type LimitKind = "primary" | "secondary";

export interface Quota {
  limit: number;
  used: number;
  remaining: number;
  /** Epoch seconds, as GitHub reports it. */
  reset: number;
}

export class RateLimits {
  readonly #windows = new Map<string, Window>();
  /** Token (or "*") → until when (epoch ms) and by which limit it is refused. */
  readonly #shut = new Map<string, { until: number; kind: LimitKind }>();

  shut(token: string, untilMs: number, kind: LimitKind = "primary"): void {
    this.#shut.set(token, { until: untilMs, kind });
  }

  quota(token: string, now = Date.now()): Quota {
    const window = this.#window(token, now);
    const shut = this.#shutOf(token, now);
    if (shut?.kind === "primary") return { limit: LIMIT, used: window.used, remaining: 0, reset: Math.ceil(shut.until / 1000) };
    return { limit: LIMIT, used: window.used, remaining: Math.max(0, LIMIT - window.used), reset: Math.ceil(window.resetAt / 1000) };
  }

  /**
   * Counts one request against `token` and answers the headers to send with it, or throws
   * GitHub's refusal when the token is shut out or has spent its hour.
   */
  take(token: string, userId: number, now = Date.now()): Record<string, string> {
    const window = this.#window(token, now);
    const shut = this.#shutOf(token, now) ?? (window.used >= LIMIT ? { until: window.resetAt, kind: "primary" as const } : null);
    if (shut?.kind === "secondary") {
      const headers = headersOf(this.quota(token, now));
      headers["retry-after"] = String(Math.max(1, Math.ceil((shut.until - now) / 1000)));
      throw new GitHubError(403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", {}, headers);
    }
    if (shut) throw new GitHubError(403, `API rate limit exceeded for user ID ${userId}.`, {}, headersOf({ limit: LIMIT, used: window.used, remaining: 0, reset: Math.ceil(shut.until / 1000) }));
    window.used++;
    return headersOf(this.quota(token, now));
  }

  #window(token: string, now: number): Window {
    let window = this.#windows.get(token);
    if (!window || window.resetAt <= now) this.#windows.set(token, (window = { resetAt: now + WINDOW_MS, used: 0 }));
    return window;
  }

  #shutOf(token: string, now: number): { until: number; kind: LimitKind } | null {
    const live = [this.#shut.get(token), this.#shut.get("*")].filter((s): s is { until: number; kind: LimitKind } => s !== undefined && s.until > now);
    return live.sort((a, b) => b.until - a.until)[0] ?? null;
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
