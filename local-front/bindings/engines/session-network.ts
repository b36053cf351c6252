import { AsyncLocalStorage } from "node:async_hooks";
import { createSecureContext, rootCertificates } from "node:tls";
import { Agent, Dispatcher, ProxyAgent, setGlobalDispatcher } from "undici";

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
 * `pi`, the curator and the completions endpoint call providers from inside the front,
 * so they cannot be handed proxy variables the way an engine process is. Instead every
 * `fetch` of the front goes through this dispatcher, which
 * sends calls made inside a session (`withSessionRoute`) through that session's proxy
 * and everything else (the front's own loopback calls) directly.
 */
class RoutingDispatcher extends Dispatcher {
  constructor(private readonly direct: Dispatcher) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    return (sessionRoute.getStore() ?? this.direct).dispatch(options, handler);
  }

  override async close(): Promise<void> {
    await this.direct.close();
  }

  override async destroy(): Promise<void> {
    await this.direct.destroy();
  }
}

function proxyFor(route: SessionRoute): ProxyAgent {
  const key = `${route.proxyUrl}\n${route.ca ?? ""}`;
  let agent = proxies.get(key);
  if (!agent) {
    // The trust store made once: given as `ca`, its hundred and more roots would be parsed
    // again for every connection through the proxy (tens of milliseconds each).
    agent = new ProxyAgent({ uri: route.proxyUrl, requestTls: route.ca ? { secureContext: createSecureContext({ ca: [...rootCertificates, route.ca] }) } : undefined });
    proxies.set(key, agent);
  }
  return agent;
}

/** Runs `fn` with its fetches sent through `route` (or directly, when null). */
export function withSessionRoute<T>(route: SessionRoute | null, fn: () => T): T {
  if (!route) return fn();
  if (!installed) {
    setGlobalDispatcher(new RoutingDispatcher(new Agent()));
    installed = true;
  }
  return sessionRoute.run(proxyFor(route), fn);
}
