import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyAgent, fetch as undiciFetch } from "undici";
import { Placeholders } from "../../local-front/bindings/proxy/placeholder.js";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim } from "../support/http.js";

/** Real-looking secrets: none may reach a session, a log or a route. */
const SECRETS = {
  openaiKey: "sk-live-OPENAI-real-111aaa",
  anthropicKey: "sk-ant-live-REAL-222bbb",
  refreshToken: "rt-live-REAL-333ccc",
};

const ACCOUNTS = {
  accounts: [
    { id: "oa-key", provider: "openai", label: "OpenAI team key", apiKey: SECRETS.openaiKey },
    { id: "an-key", provider: "anthropic", apiKey: SECRETS.anthropicKey },
    { id: "oa-login", provider: "openai", oauth: { refreshToken: SECRETS.refreshToken, clientId: "runtime-test" } },
    // The simulator treats refresh tokens beginning "revoked" as revoked logins.
    { id: "oa-revoked", provider: "openai", oauth: { refreshToken: "revoked-rt-444ddd" } },
  ],
};

const work = mkdtempSync(join(tmpdir(), "agent-runtime-proxy-"));
let front: Front;
let proxyUrl: string;
let upstreamUrl: string;
let caPem: string;

/** A call to the TLS simulator standing in for the providers, trusting the proxy's CA (which signed it). */
function upstream(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(upstreamUrl + path, { method, headers: { "content-type": "application/json", ...headers }, ca: caPem, servername: "api.openai.com" }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A request with headers `fetch` will not let a caller forge (Host). */
function rawPost(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function spawnAndRunEnv(spec: Record<string, unknown>): Promise<{ threadId: string; outcome: string; failure: any; log: string }> {
  const { body, status } = await call(front.url, "POST", "/spawn", { permissions: "allow", cwd: work, ...spec });
  expect(status, JSON.stringify(body)).toBe(201);
  const r = await call(front.url, "POST", `/threads/${body.threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: "env" } } }) });
  return { threadId: body.threadId, outcome: r.body.outcome, failure: r.body.failure, log: JSON.stringify(await events(front.url, body.threadId)) };
}

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-proxy-data-"));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify(ACCOUNTS));
  front = await startFront({ dataDir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_ACCESS_TOKEN_RATE: "3" } });
  proxyUrl = /proxy=(http:\/\/\S+)/.exec(front.output())![1]!;
  upstreamUrl = /upstream=(https:\/\/\S+)/.exec(front.output())![1]!;
  caPem = readFileSync(join(dataDir, "proxy", "ca-cert.pem"), "utf8");
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

describe("sessions hold placeholders; the credential proxy adds the real credential on the way out", () => {
  for (const spec of [
    { engine: "pi", model: "sim-1", account: "oa-key", key: SECRETS.openaiKey },
    { engine: "engine_a", model: "claude-sim", account: "an-key", key: SECRETS.anthropicKey },
    { engine: "engine_b", model: "gpt-sim", account: "oa-key", key: SECRETS.openaiKey },
  ]) {
    it(`${spec.engine}: the provider saw the real key; the session's environment and the log never held it`, async () => {
      await upstream("DELETE", "/_sim/requests");
      const { outcome, failure, log } = await spawnAndRunEnv({ engine: spec.engine, model: spec.model, account: spec.account });
      expect(outcome, JSON.stringify(failure)).toBe("completed");
      // The `env` tool call's output is in the log: the session's environment as the engine's tools see it.
      expect(log).toContain(`HTTPS_PROXY=${proxyUrl}`);
      expect(log).not.toContain(spec.key);
      const seen = (await upstream("GET", "/_sim/requests")).body.requests as { headers: Record<string, string> }[];
      expect(seen.length).toBeGreaterThan(0);
      for (const r of seen) expect(r.headers.authorization ?? r.headers["x-api-key"]).toMatch(new RegExp(spec.key));
    });
  }

  it("the placeholder a session holds is refused by the provider when sent without the proxy", async () => {
    const { log } = await spawnAndRunEnv({ engine: "engine_b", model: "gpt-sim", account: "oa-key" });
    const placeholder = /ENGINE_B_API_KEY=(svcph\.[A-Za-z0-9_.-]+)/.exec(log)?.[1];
    expect(placeholder).toBeDefined();
    const direct = await upstream("POST", "/v1/chat/completions", { authorization: `Bearer ${placeholder}` }, { model: "sim-1", messages: [{ role: "user", content: "hi" }] });
    expect(direct.status).toBe(401);
    expect(direct.body.error.code).toBe("invalid_api_key");
  });

  it("a placeholder gets its real credential only on the way to its own account's provider", async () => {
    const placeholder = new Placeholders(join(front.dataDir, "proxy", "placeholder.key")).make({ account: "oa-key", threadId: "thr_probe" });
    const viaProxy = new ProxyAgent({ uri: proxyUrl, requestTls: { ca: caPem } });
    const body = JSON.stringify({ model: "claude-sim", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    const elsewhere = await undiciFetch("https://api.anthropic.com/v1/messages", { method: "POST", dispatcher: viaProxy, headers: { "x-api-key": placeholder }, body });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers.get("x-service-proxy")).toBe("wrong-destination");
    // Loopback is passed through untouched: a local listener sees the placeholder, never the key.
    let seen = "";
    const local = createServer((req, res) => {
      seen = String(req.headers.authorization);
      res.end("ok");
    });
    await new Promise<void>((r) => local.listen(0, "127.0.0.1", r));
    try {
      const port = (local.address() as AddressInfo).port;
      expect((await undiciFetch(`http://127.0.0.1:${port}/`, { dispatcher: viaProxy, headers: { authorization: `Bearer ${placeholder}` } })).status).toBe(200);
      expect(seen).toBe(`Bearer ${placeholder}`);
    } finally {
      local.close();
      await viaProxy.close();
    }
  });

  it("refuses what is neither loopback nor a provider as JSON with a code, over plain HTTP and CONNECT alike", async () => {
    const { port } = new URL(proxyUrl);
    const plain = (path: string) =>
      new Promise<{ status: number; code: string | undefined; body: any }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path, headers: { host: "example.com" } }, (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode!, code: res.headers["x-service-proxy"] as string | undefined, body: JSON.parse(text) }));
        });
        req.on("error", reject);
        req.end();
      });
    const outside = await plain("http://example.com/");
    expect(outside).toMatchObject({ status: 403, code: "egress-refused", body: { type: "error", error: { type: "proxy_error", code: "egress-refused", message: expect.stringContaining("example.com:80") } } });
    const relative = await plain("/not-absolute");
    expect(relative).toMatchObject({ status: 400, code: "absolute-uri-required", body: { error: { code: "absolute-uri-required" } } });
    const tunnel = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n"));
      let text = "";
      socket.on("data", (d: Buffer) => (text += d));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    const [head, body] = tunnel.split("\r\n\r\n") as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 403 /);
    expect(head.toLowerCase()).toContain("x-service-proxy: egress-refused");
    expect(JSON.parse(body)).toMatchObject({ error: { code: "egress-refused", message: expect.stringContaining("example.com:443") } });
  });

  it("an OAuth login is refreshed on the host: the provider sees an access token, nobody sees the refresh token", async () => {
    await upstream("DELETE", "/_sim/requests");
    const { outcome, failure, log } = await spawnAndRunEnv({ engine: "pi", model: "sim-1", account: "oa-login" });
    expect(outcome, JSON.stringify(failure)).toBe("completed");
    expect(log).not.toContain(SECRETS.refreshToken);
    const seen = (await upstream("GET", "/_sim/requests")).body.requests as { headers: Record<string, string> }[];
    expect(seen[0]!.headers.authorization).toMatch(/^Bearer sim-at-/);
    const accounts = await call(front.url, "GET", "/accounts");
    const login = accounts.body.accounts.find((a: any) => a.id === "oa-login");
    expect(login.identity).toEqual({ provider: "openai", label: "oa-login", kind: "oauth", accountId: "acct-oa-login" });
    expect(login.health.lastSuccessAt).not.toBeNull();
  });

  it("a revoked login fails the turn as auth, and the account's health says the provider refused it", async () => {
    const { outcome, failure } = await spawnAndRunEnv({ engine: "pi", model: "sim-1", account: "oa-revoked" });
    expect(outcome).toBe("failed");
    expect(failure.class).toBe("auth");
    expect(failure.error).toContain("the provider refused account oa-revoked's login");
    const revoked = (await call(front.url, "GET", "/accounts")).body.accounts.find((a: any) => a.id === "oa-revoked");
    expect(revoked.health.lastFailureClass).toBe("auth");
  });

  it("a spawn's proxyEnv sends that one session through the proxy it names", async () => {
    const seen: string[] = [];
    // A proxy of the caller's that records what it carries and chains to the runtime's.
    const chain: Server = createServer();
    chain.on("connect", (req, client: Socket, head) => {
      seen.push(req.url!);
      const { hostname, port } = new URL(proxyUrl);
      const next = connect(Number(port), hostname, () => next.write(`CONNECT ${req.url} HTTP/1.1\r\nHost: ${req.url}\r\n\r\n`));
      next.once("data", (answer) => {
        client.write(answer);
        next.write(head);
        next.pipe(client);
        client.pipe(next);
      });
      next.on("error", () => client.destroy());
      client.on("error", () => next.destroy());
    });
    await new Promise<void>((r) => chain.listen(0, "127.0.0.1", r));
    const chainUrl = `http://127.0.0.1:${(chain.address() as AddressInfo).port}`;
    try {
      const caPath = join(front.dataDir, "proxy", "ca-cert.pem");
      const { outcome, failure, log } = await spawnAndRunEnv({
        engine: "pi",
        model: "sim-1",
        account: "oa-key",
        proxyEnv: { HTTPS_PROXY: chainUrl, NODE_EXTRA_CA_CERTS: caPath },
      });
      expect(outcome, JSON.stringify(failure)).toBe("completed");
      expect(seen).toContain("api.openai.com:443");
      expect(log).toContain(`HTTPS_PROXY=${chainUrl}`);
      expect(log).not.toContain(`HTTPS_PROXY=${proxyUrl}`);
    } finally {
      chain.close();
    }
  });
});

describe("GET /accounts and the access-token route", () => {
  it("lists every account with identity and health, and no secret", async () => {
    const r = await call(front.url, "GET", "/accounts");
    expect(r.status).toBe(200);
    expect(r.body.accounts.map((a: any) => a.id)).toEqual(["oa-key", "an-key", "oa-login", "oa-revoked"]);
    expect(r.body.accounts[0].identity).toMatchObject({ provider: "openai", label: "OpenAI team key", kind: "api-key" });
    expect(r.body.engines.map((e: any) => e.engine)).toEqual(["pi", "engine_a", "engine_b"]);
    const text = JSON.stringify(r.body);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  });

  it("issues a short-lived access token of a login to a local caller", async () => {
    const r = await call(front.url, "POST", "/accounts/oa-login/access-token");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ account: "oa-login", tokenType: "Bearer" });
    expect(r.body.accessToken).toMatch(/^sim-at-/);
    expect(Date.parse(r.body.expiresAt)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(r.body)).not.toContain(SECRETS.refreshToken);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses exactly as documented: 404 unknown, 409 no token to give, 403 untrusted, 429 rate limited", async () => {
    const unknown = await call(front.url, "POST", "/accounts/nobody/access-token");
    expect([unknown.status, unknown.body.code]).toEqual([404, "account-not-found"]);
    const apiKey = await call(front.url, "POST", "/accounts/oa-key/access-token");
    expect([apiKey.status, apiKey.body.code]).toEqual([409, "credential-not-available"]);
    expect(JSON.stringify(apiKey.body)).not.toContain(SECRETS.openaiKey);
    const revoked = await call(front.url, "POST", "/accounts/oa-revoked/access-token");
    expect([revoked.status, revoked.body.code]).toEqual([409, "credential-not-available"]);

    const rebound = await rawPost(front.url, "/accounts/oa-login/access-token", { host: "attacker.example:4741" });
    expect([rebound.status, rebound.body.code]).toEqual([403, "untrusted-caller"]);
    const crossOrigin = await rawPost(front.url, "/accounts/oa-login/access-token", { origin: "https://attacker.example" });
    expect([crossOrigin.status, crossOrigin.body.code]).toEqual([403, "untrusted-caller"]);
    // The application server's own origin may call the runtime from a browser, but a token never goes to a page.
    const appPage = await rawPost(front.url, "/accounts/oa-login/access-token", { origin: "http://127.0.0.1:5189" });
    expect([appPage.status, appPage.body.code]).toEqual([403, "caller-not-local"]);

    // SERVICE_ACCESS_TOKEN_RATE=3 a minute; one was issued by the test before.
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | null = null;
    for (let i = 0; i < 3; i++) {
      last = await call(front.url, "POST", "/accounts/oa-login/access-token");
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last!.body.code).toBe("access-token-rate-limited");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("spawns naming accounts", () => {
  it("refuses an unknown account and one of the wrong provider, before any thread exists", async () => {
    const unknown = await call(front.url, "POST", "/spawn", { model: "sim-1", account: "nobody" });
    expect([unknown.status, unknown.body.code]).toEqual([400, "unknown-account"]);
    expect(unknown.body.accounts).toContain("oa-key");
    const wrong = await call(front.url, "POST", "/spawn", { engine: "engine_a", model: "claude-sim", account: "oa-key" });
    expect([wrong.status, wrong.body.code]).toEqual([400, "account-provider-mismatch"]);
  });

  it("refuses a proxyEnv that is not an object of strings, or names no proxy", async () => {
    for (const proxyEnv of [["HTTPS_PROXY"], { HTTPS_PROXY: 8080 }, "http://proxy", {}, { NO_PROXY: "*" }]) {
      const r = await call(front.url, "POST", "/spawn", { model: "sim-1", proxyEnv });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("proxyEnv");
    }
  });

  it("without an account of its own, a thread runs on the first healthy account of its provider", async () => {
    await upstream("DELETE", "/_sim/requests");
    const { outcome } = await spawnAndRunEnv({ engine: "pi", model: "sim-1" });
    expect(outcome).toBe("completed");
    const seen = (await upstream("GET", "/_sim/requests")).body.requests as { headers: Record<string, string> }[];
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${SECRETS.openaiKey}`);
  });
});

describe("when the proxy cannot reach the provider", () => {
  let down: Front;
  // A port held for the test that hangs up on every connection: the provider cannot be
  // reached, the login is fine, and no other test can take the port meanwhile.
  const hangUp = createNetServer((socket) => socket.destroy());
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-proxy-down-"));
    await new Promise<void>((r) => hangUp.listen(0, "127.0.0.1", r));
    const closed = (hangUp.address() as AddressInfo).port;
    writeFileSync(
      join(dataDir, "accounts.json"),
      JSON.stringify({
        accounts: [
          { id: "oa-down", provider: "openai", apiKey: "sk-live-DOWN-555eee", baseUrl: `https://127.0.0.1:${closed}/v1` },
          { id: "oa-login-down", provider: "openai", oauth: { refreshToken: "rt-live-DOWN-666fff", tokenUrl: `https://127.0.0.1:${closed}/oauth/token` } },
        ],
      }),
    );
    down = await startFront({ dataDir });
  });
  afterAll(async () => {
    await down?.stop();
    removeDir(down.dataDir);
    hangUp.close();
  });

  it("the turn's failure and the account's health say so, apart from a refused login", async () => {
    const { threadId } = (await call(down.url, "POST", "/spawn", { model: "sim-1", account: "oa-down" })).body;
    const r = await call(down.url, "POST", `/threads/${threadId}/send`, { text: "hello" });
    expect(r.body.outcome).toBe("failed");
    expect(r.body.failure.error).toMatch(/^credential proxy could not reach 127\.0\.0\.1:\d+: /);
    const health = (await call(down.url, "GET", "/accounts")).body.accounts.find((a: any) => a.id === "oa-down").health;
    expect(health.lastFailureClass).toBe("proxy-unreachable");
  });

  it("the access-token route answers 503 while the token endpoint cannot be reached", async () => {
    const r = await call(down.url, "POST", "/accounts/oa-login-down/access-token");
    expect([r.status, r.body.code]).toEqual([503, "credential-unreachable"]);
    expect(r.headers.get("retry-after")).toBe("30");
  });
});

describe("with SERVICE_PROXY=off", () => {
  let off: Front;
  let provider: Simulator;
  beforeAll(async () => {
    provider = await startSimulator({ credentials: { apiKeys: { "sk-live-OFF-777ggg": { provider: "openai", org: "org-off" } }, refreshTokens: {}, hosts: {} } });
    const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-proxy-off-"));
    writeFileSync(
      join(dataDir, "accounts.json"),
      JSON.stringify({ accounts: [{ id: "oa-direct", provider: "openai", apiKey: "sk-live-OFF-777ggg", baseUrl: `${provider.url}/v1` }] }),
    );
    off = await startFront({ dataDir, env: { SERVICE_PROXY: "off" } });
  });
  afterAll(async () => {
    await off?.stop();
    await provider?.close();
    removeDir(off.dataDir);
  });

  it("a session keeps its network access unchanged and calls the provider itself", async () => {
    expect(off.output()).toContain("proxy=off");
    const { threadId } = (await call(off.url, "POST", "/spawn", { model: "sim-1", permissions: "allow", cwd: work })).body;
    const r = await call(off.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: "env" } } }) });
    expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    const log = JSON.stringify(await events(off.url, threadId));
    expect(log).not.toContain("HTTPS_PROXY");
    const seen = (await (await fetch(`${provider.url}/_sim/requests`)).json()) as { requests: { headers: Record<string, string> }[] };
    expect(seen.requests[0]!.headers.authorization).toBe("Bearer sk-live-OFF-777ggg");
  });
});
