import { CODES } from "./api/errors.js";
import { refusal } from "./http.js";

const WINDOW_MS = 60_000;
/** Clients remembered at most; the quietest are forgotten first. */
const MAX_CLIENTS = 10_000;

/** When each client's recent first pages were asked for, oldest first. */
const spent = new Map<string, number[]>();

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
export function listBudgetRefusal(headers: Headers, budget: number, now = Date.now()): Response | null {
  const client = clientOf(headers);
  const times = (spent.get(client) ?? []).filter((t) => t > now - WINDOW_MS);
  if (times.length >= budget) {
    spent.set(client, times);
    const retryAfterS = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - now) / 1000));
    return refusal(
      429,
      `this client asked for ${times.length} first pages of /threads in the last minute (budget ${budget}); follow /workspaces/:name/changes instead of polling`,
      CODES.threadListRateLimited,
      { budget, client },
      { "retry-after": String(retryAfterS) },
    );
  }
  times.push(now);
  spent.delete(client);
  spent.set(client, times);
  if (spent.size > MAX_CLIENTS) spent.delete(spent.keys().next().value!);
  return null;
}
