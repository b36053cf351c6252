import { CODES } from "../api/errors.js";
import { refused } from "./answer.js";
import { MinuteBudget } from "../shared/minute-budget.js";

/** Clients remembered at most; the quietest are forgotten first. */
const MAX_CLIENTS = 10_000;

/** Each client's budget, the most recently used last. */
const spent = new Map<string, MinuteBudget>();

/**
 * The client a listing budget belongs to: the peer address and `x-service-client` (or
 * the User-Agent without it). Behind the front every peer is loopback, so here the
 * header is what tells clients apart.
 */
function clientOf(headers: Headers): string {
  const peer = headers.get("cf-connecting-ip") ?? "127.0.0.1";
  return `${peer} ${headers.get("x-service-client") ?? headers.get("user-agent") ?? "-"}`;
}

/**
 * SPEC: each client may ask for `budget` first pages of `GET /threads` a minute (a
 * sliding window); beyond it, 429 `thread-list-rate-limited` until the oldest ages out.
 * Pages after the first are free: a client paging through is not polling. The window
 * lives in this isolate's memory: the router runs as one isolate on a host.
 */
export function spendListBudget(headers: Headers, budget: number, now = Date.now()): void {
  const client = clientOf(headers);
  const window = spent.get(client) ?? new MinuteBudget(budget);
  spent.delete(client);
  spent.set(client, window);
  if (spent.size > MAX_CLIENTS) spent.delete(spent.keys().next().value!);
  const retryAfterS = window.take(now);
  if (retryAfterS !== null)
    refused(
      429,
      `this client spent its budget of ${budget} first pages of /threads a minute; follow /workspaces/:name/changes instead of polling`,
      CODES.threadListRateLimited,
      { budget, client },
      { "retry-after": String(retryAfterS) },
    );
}
