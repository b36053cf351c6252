import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { createSecureContext, rootCertificates } from "node:tls";
import type * as Undici from "undici";
import type { Dispatcher, ProxyAgent } from "undici";

/** How a call the front makes for a session (a `pi` turn, the curator, a completion) reaches providers: through a proxy, trusting its CA. */
export interface SessionRoute {
  proxyUrl: string;
  /** PEM of the CA the proxy signs intercepted connections with, if any. */
  ca: string | null;
}

const sessionRoute = new AsyncLocalStorage<Dispatcher>();
const proxies = new Map<string, ProxyAgent>();
let installed = false;

/**
 * undici, loaded with the first call made for a session rather than at the front's start:
 * about 0.14 s of CPU and 17 MB that a start does without (docs/performance.md, "Issue 32:
 * the front's start, again"). Required, not imported, so that this stays synchronous.
 */
let undici: typeof Undici | null = null;
const loadUndici = (): typeof Undici => (undici ??= createRequire(import.meta.url)("undici") as typeof Undici);

/**
 * `pi`, the curator and the completions endpoint call providers from inside the front,
 * so they cannot be handed proxy variables the way an engine process is. Instead every
 * `fetch` of the front goes through this dispatcher, which
 * sends calls made inside a session (`withSessionRoute`) through that session's proxy
 * and everything else (the front's own loopback calls) directly.
 */
function routingDispatcher({ Dispatcher: Base }: typeof Undici, direct: Dispatcher): Dispatcher {
  class RoutingDispatcher extends Base {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
      return (sessionRoute.getStore() ?? direct).dispatch(options, handler);
    }

    override async close(): Promise<void> {
      await direct.close();
    }

    override async destroy(): Promise<void> {
      await direct.destroy();
    }
  }
  return new RoutingDispatcher();
}

function proxyFor(route: SessionRoute): ProxyAgent {
  const key = `${route.proxyUrl}\n${route.ca ?? ""}`;
  let agent = proxies.get(key);
  if (!agent) {
    // The trust store made once: given as `ca`, its hundred and more roots would be parsed
    // again for every connection through the proxy (tens of milliseconds each).
    agent = new (loadUndici().ProxyAgent)({ uri: route.proxyUrl, requestTls: route.ca ? { secureContext: createSecureContext({ ca: [...rootCertificates, route.ca] }) } : undefined });
    proxies.set(key, agent);
  }
  return agent;
}

/** Runs `fn` with its fetches sent through `route` (or directly, when null). */
export function withSessionRoute<T>(route: SessionRoute | null, fn: () => T): T {
  if (!route) return fn();
  if (!installed) {
    const u = loadUndici();
    u.setGlobalDispatcher(routingDispatcher(u, new u.Agent()));
    installed = true;
  }
  return sessionRoute.run(proxyFor(route), fn);
}
