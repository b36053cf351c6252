import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROVIDER_BASE_URLS, PROVIDER_TOKEN_URLS, type AccountConfig } from "../src/api/accounts.js";
import { AccountPool } from "./bindings/accounts/pool.js";
import { TokenStore } from "./bindings/accounts/token-store.js";
import { ConfigError, type FrontConfig } from "./process/config.js";
import type { CompletionDeps } from "./bindings/completions/call.js";
import { ModelCatalog } from "./bindings/completions/models.js";
import type { NetworkDeps, SessionProxy } from "./bindings/engines/access.js";
import { loadOrCreateCa, writeTrustBundle, type ProxyCa } from "./bindings/proxy/ca.js";
import { Placeholders } from "./bindings/proxy/placeholder.js";
import { startCredentialProxy, type CredentialProxy } from "./bindings/proxy/server.js";
import { providerUpstream, type Upstream } from "./bindings/proxy/upstream.js";
import { startSimulator, type CredentialSet, type Simulator } from "./simulator/server.js";

/** Everything between sessions and providers: the account pool, the proxy, the simulators. */
export interface Network {
  deps: NetworkDeps;
  /** What the completions endpoint's calls need. */
  completions: CompletionDeps;
  pool: AccountPool;
  proxy: CredentialProxy | null;
  /** The plain simulator that answers when no account serves a provider. */
  simulator: Simulator | null;
  /** The TLS simulator standing in for every provider host (SERVICE_PROVIDER_UPSTREAM=simulator). */
  upstreamSimulator: Simulator | null;
  upstream: Upstream;
  /** One line for the start log. */
  describe: string;
  /** Once the proxy can answer a session's first connection: the front opens its door after it. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * What the simulator accepts when it stands in for the providers: each provider's hosts
 * (its API and token endpoint, and any base URL an account names), and the configured
 * keys and refresh tokens of that provider, each answered with an id of its own. A
 * refresh token that begins with `revoked` is left out, so a revoked login can be
 * rehearsed offline.
 */
function simulatorCredentials(accounts: AccountConfig[]): CredentialSet {
  const set: CredentialSet = { apiKeys: {}, refreshTokens: {}, hosts: {} };
  for (const provider of ["openai", "anthropic"] as const) {
    set.hosts[new URL(PROVIDER_BASE_URLS[provider]).hostname] = provider;
    set.hosts[new URL(PROVIDER_TOKEN_URLS[provider]).hostname] = provider;
  }
  for (const a of accounts) {
    if (a.baseUrl) set.hosts[new URL(a.baseUrl).hostname] = a.provider;
    if (a.oauth?.tokenUrl) set.hosts[new URL(a.oauth.tokenUrl).hostname] = a.provider;
    if (a.apiKey) set.apiKeys[a.apiKey] = { provider: a.provider, org: `org-${a.id}` };
    if (a.oauth && !a.oauth.refreshToken.startsWith("revoked")) set.refreshTokens[a.oauth.refreshToken] = { provider: a.provider, accountId: a.oauth.accountId ?? `acct-${a.id}` };
  }
  return set;
}

/** The proxy sessions are told about: ours, an external one (SERVICE_PROXY_URL), or none. */
function sessionProxy(config: FrontConfig, proxy: CredentialProxy | null, ca: ProxyCa | null): SessionProxy | null {
  if (!config.proxy.on) return null;
  if (proxy && ca) return { url: proxy.url, caPath: ca.certPath, caPem: ca.certPem, bundlePath: ca.bundlePath };
  const external = config.proxy.externalUrl!;
  if (!config.proxy.caGiven) return { url: external, caPath: null, caPem: null, bundlePath: null };
  if (!existsSync(config.proxy.caPath)) throw new ConfigError(`SERVICE_PROXY_CA names ${config.proxy.caPath}, which does not exist`);
  const certPem = readFileSync(config.proxy.caPath, "utf8");
  return { url: external, caPath: config.proxy.caPath, caPem: certPem, bundlePath: writeTrustBundle(certPem, join(config.dataDir, "proxy", "external")) };
}

export async function startNetwork(config: FrontConfig): Promise<Network> {
  const ownProxy = config.proxy.on && !config.proxy.externalUrl;
  const ca = ownProxy || config.providerUpstream === "simulator" ? await loadOrCreateCa(config.proxy.caPath) : null;
  const simulator = config.simulator ? await startSimulator({ port: config.simulatorPort }) : null;
  // The simulator standing in for the providers serves its first certificate as it listens.
  if (config.providerUpstream === "simulator") await ca!.ready;
  const upstreamSimulator =
    config.providerUpstream === "simulator" ? await startSimulator({ tls: { certFor: (host) => ca!.leaf(host) }, credentials: { ...simulatorCredentials(config.accounts), stateFile: join(config.dataDir, "simulator", "oauth.json"), accessTokenSeconds: config.simulatorTokenSeconds } }) : null;
  const upstream = providerUpstream(upstreamSimulator ? { port: upstreamSimulator.port, ca: ca!.certPem } : null);
  const pool = new AccountPool(config.accounts, new TokenStore(join(config.dataDir, "accounts-tokens.json")), upstream, config.accessTokensPerMinute);
  const placeholders = new Placeholders(join(config.dataDir, "proxy", "placeholder.key"));
  const proxy = ownProxy ? await startCredentialProxy({ ca: ca!, pool, placeholders, upstream }) : null;
  const toSessions = sessionProxy(config, proxy, ca);
  const models = simulator ? `simulator=${simulator.url}` : `accounts=${config.accounts.map((a) => a.id).join(",")}`;
  const providers = new Set(config.accounts.map((a) => a.provider));
  return {
    deps: { pool, placeholders, proxy: toSessions, simulatorUrl: simulator?.url ?? null },
    completions: {
      pool,
      placeholders,
      proxy: toSessions,
      simulatorUrl: simulator?.url ?? null,
      catalog: new ModelCatalog(providers, simulator ? "stands-in" : upstreamSimulator ? "upstream" : "none"),
    },
    pool,
    proxy,
    simulator,
    upstreamSimulator,
    upstream,
    ready: ca?.ready ?? Promise.resolve(),
    describe: `${models} proxy=${toSessions?.url ?? "off"} upstream=${upstreamSimulator ? upstreamSimulator.url : upstream.name}`,
    close: async () => {
      await proxy?.close();
      await simulator?.close();
      await upstreamSimulator?.close();
    },
  };
}
