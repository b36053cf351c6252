import { mkdtempSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROVIDER_BASE_URLS } from "../../src/api/accounts.js";
import type { CompletionReport } from "../../src/api/completions.js";
import { AccountPool } from "../../local-front/bindings/accounts/pool.js";
import { TokenStore } from "../../local-front/bindings/accounts/token-store.js";
import { runCompletion, type CompletionDeps } from "../../local-front/bindings/completions/call.js";
import { ModelCatalog } from "../../local-front/bindings/completions/models.js";
import { loadOrCreateCa } from "../../local-front/bindings/proxy/ca.js";
import { Placeholders } from "../../local-front/bindings/proxy/placeholder.js";
import { startCredentialProxy } from "../../local-front/bindings/proxy/server.js";
import { providerUpstream } from "../../local-front/bindings/proxy/upstream.js";
import { startSimulator } from "../../local-front/simulator/server.js";
import { removeDir } from "../support/front.js";

/**
 * The completions endpoint's calls keep their connections: toward the provider (or the
 * plain simulator), through the credential proxy's tunnel, and from the proxy onward. A
 * connection a call is a TCP setup at best and, through the proxy, two TLS handshakes.
 * Eight calls in turn may open a second connection (a call can go out before the last
 * one's connection is back in its pool), never one a call.
 */
const CALLS = 8;
const dir = mkdtempSync(join(tmpdir(), "completion-connections-"));
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  removeDir(dir);
});

/** A TCP relay to `port` that counts the connections made through it. */
async function countingRelay(port: number): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    count++;
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => count };
}

const request = { model: "sim-1", stream: true, messages: [{ role: "user" as const, content: '@sim {"reply": "one two three", "chunks": 3}' }] };

async function complete(deps: CompletionDeps, accounts: string[]): Promise<CompletionReport[]> {
  const reports: CompletionReport[] = [];
  await runCompletion(deps, { accounts, threadId: "thr_conn", request } as never, (r) => reports.push(r), new AbortController().signal);
  return reports;
}

function answered(reports: CompletionReport[]): string {
  expect(reports.at(-1)?.type).toBe("end");
  expect(reports.filter((r) => r.type === "end")).toHaveLength(1);
  return reports
    .flatMap((r) => (r.type === "chunk" ? [(r.data.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? ""] : []))
    .join("");
}

describe("a completion's connections", () => {
  it("one connection to the plain simulator serves call after call", async () => {
    const sim = await startSimulator();
    closers.push(() => sim.close());
    const relay = await countingRelay(sim.port);
    const deps: CompletionDeps = {
      pool: new AccountPool([], new TokenStore(join(dir, "plain-tokens.json")), providerUpstream(null), 60),
      placeholders: new Placeholders(join(dir, "plain.key")),
      proxy: null,
      simulatorUrl: `http://127.0.0.1:${relay.port}`,
      catalog: new ModelCatalog(new Set(), "stands-in"),
    };
    for (let i = 0; i < CALLS; i++) expect(answered(await complete(deps, []))).toBe("one two three");
    expect(relay.connections()).toBeLessThanOrEqual(2);
  });

  it("through the credential proxy: one tunnel to the proxy and one connection from it to the provider", async () => {
    const ca = await loadOrCreateCa(join(dir, "proxy", "ca.pem"));
    await ca.ready;
    const hosts = { [new URL(PROVIDER_BASE_URLS.openai).hostname]: "openai" as const };
    const sim = await startSimulator({ tls: { certFor: (h) => ca.leaf(h) }, credentials: { apiKeys: { "sk-live-conn": { provider: "openai", org: "org-conn" } }, refreshTokens: {}, hosts } });
    closers.push(() => sim.close());
    const toProvider = await countingRelay(sim.port);
    const upstream = providerUpstream({ port: toProvider.port, ca: ca.certPem });
    const pool = new AccountPool([{ id: "conn", provider: "openai", apiKey: "sk-live-conn" }], new TokenStore(join(dir, "proxy-tokens.json")), upstream, 60);
    const placeholders = new Placeholders(join(dir, "proxy", "placeholder.key"));
    const proxy = await startCredentialProxy({ ca, pool, placeholders, upstream });
    closers.push(() => proxy.close());
    const toProxy = await countingRelay(Number(new URL(proxy.url).port));
    const deps: CompletionDeps = {
      pool,
      placeholders,
      proxy: { url: `http://127.0.0.1:${toProxy.port}`, caPath: ca.certPath, caPem: ca.certPem, bundlePath: ca.bundlePath },
      simulatorUrl: null,
      catalog: new ModelCatalog(new Set(["openai"]), "upstream"),
    };
    for (let i = 0; i < CALLS; i++) expect(answered(await complete(deps, ["conn"]))).toBe("one two three");
    expect(toProxy.connections()).toBeLessThanOrEqual(2);
    expect(toProvider.connections()).toBeLessThanOrEqual(2);
  });
});
