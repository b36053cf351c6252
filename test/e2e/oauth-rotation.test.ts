import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call } from "../support/http.js";

/** An OAuth login against the simulator standing in for the providers, which rotates refresh tokens as they do. */
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-rotation-"));
writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "login", provider: "anthropic", oauth: { refreshToken: "rt-live-ROTATE-1" } }] }));
const tokens = join(dataDir, "accounts-tokens.json");

let front: Front | null = null;
afterAll(async () => {
  await front?.stop();
  removeDir(dataDir);
});

async function start(): Promise<Front> {
  front = await startFront({ dataDir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_AGENTS_PORT: String(await freePort()) } });
  return front;
}

/** Makes the stored access token due, so the next use refreshes the login. */
function expireAccessToken(): void {
  const store = JSON.parse(readFileSync(tokens, "utf8"));
  store.login.expiresAt = 0;
  writeFileSync(tokens, JSON.stringify(store));
}

describe("an OAuth login whose refresh token rotates", () => {
  it("keeps working across a restart, on the rotated token the pool persisted", async () => {
    let f = await start();
    const first = await call(f.url, "POST", "/accounts/login/access-token");
    expect(first.status).toBe(200);
    const rotated = JSON.parse(readFileSync(tokens, "utf8")).login.refreshToken;
    expect(rotated).toMatch(/^sim-rt-/);
    await f.stop();

    expireAccessToken();
    f = await start();
    const second = await call(f.url, "POST", "/accounts/login/access-token");
    expect(second.status).toBe(200);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);
    // Rotated again: the one used after the restart is retired too.
    expect(JSON.parse(readFileSync(tokens, "utf8")).login.refreshToken).not.toBe(rotated);
    await f.stop();

    // Without the persisted rotation the login would be lost: the configured token was retired at the first refresh.
    rmSync(tokens);
    f = await start();
    const lost = await call(f.url, "POST", "/accounts/login/access-token");
    expect(lost.status).toBe(409);
    expect(lost.body.code).toMatch(/revoked|credential/);
  });
});

/** A login whose access tokens live three seconds, as a provider's can be short. */
describe("an access token past its expires_in", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-runtime-expiry-"));
  const work = mkdtempSync(join(tmpdir(), "agent-runtime-expiry-work-"));
  writeFileSync(join(dir, "accounts.json"), JSON.stringify({ accounts: [{ id: "short", provider: "openai", oauth: { refreshToken: "rt-live-SHORT-1" } }] }));
  let short: Front | null = null;
  afterAll(async () => {
    await short?.stop();
    removeDir(dir);
    removeDir(work);
  });

  /** A call to the TLS simulator standing in for OpenAI, trusting the CA that signed it. */
  const upstream = (url: string, ca: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpsRequest(url + path, { method, headers: { "content-type": "application/json", ...headers }, ca, servername: "api.openai.com" }, (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      });
      req.on("error", reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });

  it("is refused by the provider, and the runtime refreshes once a lifetime: not on every call, and before the provider would refuse", async () => {
    short = await startFront({ dataDir: dir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_SIMULATOR_TOKEN_SECONDS: "3", SERVICE_AGENTS_PORT: String(await freePort()) } });
    const url = /upstream=(https:\/\/\S+)/.exec(short.output())![1]!;
    const ca = readFileSync(join(dir, "proxy", "ca-cert.pem"), "utf8");
    const spawned = await call(short.url, "POST", "/spawn", { engine: "pi", model: "sim-1", account: "short", permissions: "allow", cwd: work });
    expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
    const id = spawned.body.threadId as string;
    /** Sends one message and answers the bearer the provider saw for its model call. */
    const turn = async (text: string) => {
      await upstream(url, ca, "DELETE", "/_sim/requests");
      const r = await call(short!.url, "POST", `/threads/${id}/send`, { text });
      expect(r.body.outcome, JSON.stringify(r.body)).toBe("completed");
      const seen = (await upstream(url, ca, "GET", "/_sim/requests")).body.requests as { headers: Record<string, string> }[];
      return seen.at(-1)!.headers.authorization!;
    };

    const first = await turn("one");
    expect(first).toMatch(/^Bearer sim-at-/);
    // Within its lifetime the token is used again: no refresh per call.
    expect(await turn("two")).toBe(first);

    // Past it, the provider refuses the token as OpenAI refuses an expired one...
    await new Promise((r) => setTimeout(r, 3_200));
    const stale = await upstream(url, ca, "POST", "/v1/chat/completions", { authorization: first }, { model: "sim-1", messages: [{ role: "user", content: "x" }] });
    expect(stale.status).toBe(401);
    expect(stale.body.error.code).toBe("token_expired");
    const again = await upstream(url, ca, "POST", "/v1/chat/completions", { authorization: first }, { model: "sim-1", messages: [{ role: "user", content: "x" }] });
    expect([again.status, again.body.error.code]).toEqual([401, "token_expired"]);
    // ...and the runtime has refreshed the login before using it again.
    const third = await turn("three");
    expect(third).toMatch(/^Bearer sim-at-/);
    expect(third).not.toBe(first);
    const login = (await call(short.url, "GET", "/accounts")).body.accounts.find((a: any) => a.id === "short");
    expect(login.health.lastFailureClass ?? null).toBeNull();
  });
});
