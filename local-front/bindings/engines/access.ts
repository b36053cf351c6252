import { readFileSync } from "node:fs";
import type { Provider } from "../../../src/api/accounts.js";
import type { TurnFailure, TurnRequest } from "../../../src/api/engine.js";
import { PROXY_VARIABLES } from "../../../src/api/threads.js";
import { providerOf } from "../../../src/rules/spawn.js";
import type { AccountPool } from "../accounts/pool.js";
import type { Placeholders } from "../proxy/placeholder.js";
import type { SessionRoute } from "./session-network.js";
import type { RunOutcome } from "./turn.js";

/** The proxy sessions are pointed at: the runtime's own, or SERVICE_PROXY_URL's. */
export interface SessionProxy {
  url: string;
  /** The CA certificate sessions must trust (PEM file), when the proxy intercepts TLS. */
  caPath: string | null;
  /** That certificate's PEM, read once, for `pi`'s in-process route. */
  caPem: string | null;
  /** The CA and the system's roots in one file, for tools that read a single bundle. */
  bundlePath: string | null;
}

export interface NetworkDeps {
  pool: AccountPool;
  placeholders: Placeholders;
  /** Null when SERVICE_PROXY=off. */
  proxy: SessionProxy | null;
  /** The plain simulator, standing in for providers that no account serves. */
  simulatorUrl: string | null;
}

/** How one session reaches its model's provider. */
export interface SessionAccess {
  provider: Provider;
  account: string | null;
  /** The provider's base URL as its SDK expects it (OpenAI's with `/v1`, Anthropic's without). */
  baseUrl: string;
  /** What the session holds: a placeholder, unless the proxy is off (then the real credential) or the simulator answers. */
  apiKey: string;
  /** `apiKey` is an OAuth access token (sent as a bearer token, not as an API key). */
  bearer: boolean;
  /** Proxy and CA-trust variables for the session's processes (engine CLIs and tool shells). */
  env: Record<string, string>;
  /** The same route for `pi`'s in-process calls. */
  route: SessionRoute | null;
}

const LOOPBACK = "127.0.0.1,localhost,::1";

function proxyVars(url: string): Record<string, string> {
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: LOOPBACK, no_proxy: LOOPBACK };
}

/** Node reads the CA alone (added to its roots); OpenSSL-based tools and codex read a whole bundle. */
function trustVars(proxy: SessionProxy): Record<string, string> {
  const vars: Record<string, string> = {};
  if (proxy.caPath) vars.NODE_EXTRA_CA_CERTS = proxy.caPath;
  if (proxy.bundlePath)
    for (const name of ["SSL_CERT_FILE", "CODEX_CA_CERTIFICATE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"]) vars[name] = proxy.bundlePath;
  return vars;
}

function readPem(path: string | undefined): string | null {
  if (!path) return null;
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** A spawn's `proxyEnv`, as `pi`'s in-process route. */
function routeOf(env: Record<string, string>): SessionRoute | null {
  const url = PROXY_VARIABLES.map((name) => env[name]).find(Boolean);
  if (!url) return null;
  return { proxyUrl: url, ca: readPem(env.NODE_EXTRA_CA_CERTS ?? env.SSL_CERT_FILE ?? env.CODEX_CA_CERTIFICATE) };
}

/**
 * Decides how a turn's session reaches its provider. The account is the thread's own,
 * or the first healthy one of its workspace's roster (of any unclaimed account without a
 * workspace) that serves the model's provider, has not been refused the model and, for
 * engine_b, has not spent its allowance (`AccountPool.pick`). With the proxy on, the session holds a
 * signed placeholder and the proxy's settings; a spawn's `proxyEnv` replaces the proxy
 * settings for that session; with the proxy off the session holds the real credential
 * and its network is left as it is. While the plain simulator runs it answers every call.
 */
export async function sessionAccess(deps: NetworkDeps, req: TurnRequest): Promise<{ access: SessionAccess } | { failure: TurnFailure }> {
  const provider = providerOf(req.engine, req.model);
  // A running simulator answers every call (SERVICE_SIMULATOR=on is "offline"; auto runs it when no account is configured).
  const picked = deps.simulatorUrl || req.account ? null : deps.pool.pick({ provider, engine: req.engine, model: req.model, ...req.accountChoice });
  if (picked && "failure" in picked) return { failure: picked.failure };
  const account = deps.simulatorUrl ? null : (req.account ?? picked?.account ?? null);
  const proxyEnv = req.proxyEnv;
  const network: Pick<SessionAccess, "env" | "route"> = proxyEnv
    ? { env: proxyEnv, route: routeOf(proxyEnv) }
    : deps.proxy
      ? {
          env: { ...proxyVars(deps.proxy.url), ...trustVars(deps.proxy) },
          route: { proxyUrl: deps.proxy.url, ca: deps.proxy.caPem },
        }
      : { env: {}, route: null };

  if (!account) {
    if (deps.simulatorUrl)
      return {
        access: { provider, account: null, baseUrl: provider === "openai" ? `${deps.simulatorUrl}/v1` : deps.simulatorUrl, apiKey: "placeholder-not-a-key", bearer: false, ...network },
      };
    const where = req.accountChoice.only ? `the workspace's roster (${req.accountChoice.only.join(", ") || "empty"})` : "the account pool";
    return { failure: { class: "auth", error: `no ${provider} account in ${where} can serve ${req.model}; add one to accounts.json` } };
  }
  if (!deps.pool.has(account)) return { failure: { class: "auth", error: `account ${account} is not configured on this host` } };
  if (deps.pool.provider(account) !== provider)
    return { failure: { class: "auth", error: `account ${account} is a ${deps.pool.provider(account)} account; ${req.model} on ${req.engine} needs ${provider}` } };
  const baseUrl = deps.pool.baseUrl(account);
  if (proxyEnv || deps.proxy) return { access: { provider, account, baseUrl, apiKey: deps.placeholders.make({ account, threadId: req.threadId }), bearer: false, ...network } };
  const cred = await deps.pool.credential(account);
  if (!cred.ok) return { failure: { class: "auth", error: cred.error } };
  return { access: { provider, account, baseUrl, apiKey: cred.credential.secret, bearer: cred.credential.kind === "oauth", ...network } };
}

/**
 * Tells the pool how a turn on `account` ended (`AccountPool.turnEnded`: a refused model,
 * a spent engine_b allowance, or a turn that ran), and passes the outcome on. Each engine
 * wraps its run in it; a turn that never got an account tells nothing.
 */
export function tellPool(deps: NetworkDeps, req: TurnRequest, account: () => string | null, run: Promise<RunOutcome>): Promise<RunOutcome> {
  return run.then((outcome) => {
    const id = account();
    const failure = outcome === null || "stop" in outcome ? null : outcome;
    // An interrupted turn says nothing of the account.
    if (id && failure?.class !== "interrupted") deps.pool.turnEnded(id, req.engine, req.model, failure);
    return outcome;
  });
}
