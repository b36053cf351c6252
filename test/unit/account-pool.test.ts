import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AccountPool } from "../../local-front/bindings/accounts/pool.js";
import { TokenStore } from "../../local-front/bindings/accounts/token-store.js";
import { Placeholders } from "../../local-front/bindings/proxy/placeholder.js";
import { providerUpstream } from "../../local-front/bindings/proxy/upstream.js";
import { removeDir } from "../support/front.js";

const dir = mkdtempSync(join(tmpdir(), "account-pool-"));
afterAll(() => removeDir(dir));

describe("placeholders", () => {
  const placeholders = new Placeholders(join(dir, "ph.key"));

  it("name their account and thread, and survive a new reader with the same key", () => {
    const p = placeholders.make({ account: "team.openai-1", threadId: "thr_abc" });
    expect(p).toMatch(/^svcph\./);
    expect(new Placeholders(join(dir, "ph.key")).read(p)).toEqual({ account: "team.openai-1", threadId: "thr_abc" });
  });

  it("cannot be forged for another account, and are not confused with real keys", () => {
    const p = placeholders.make({ account: "a", threadId: "t" });
    const [prefix, , thread, mac] = p.split(".");
    const forged = [prefix, Buffer.from("b").toString("base64url"), thread, mac].join(".");
    expect(placeholders.read(forged)).toBeNull();
    expect(placeholders.read("sk-live-real-key")).toBeNull();
    expect(new Placeholders(join(dir, "other.key")).read(p)).toBeNull();
  });
});

describe("the account pool", () => {
  const pool = () =>
    new AccountPool(
      [
        { id: "o1", provider: "openai", apiKey: "k1" },
        { id: "a1", provider: "anthropic", apiKey: "k2" },
        { id: "o2", provider: "openai", apiKey: "k3" },
      ],
      new TokenStore(join(dir, "tokens.json")),
      providerUpstream(null),
      2,
    );

  /** A pi turn's placement of an openai model: any account, none excluded, unless the test says. */
  const on = (p: AccountPool, provider: "openai" | "anthropic", only: string[] | null = null, exclude: string[] = [], engine: "pi" | "engine_b" = "pi", model = "gpt-5") => {
    const picked = p.pick({ provider, engine, model, only, exclude });
    return picked && ("account" in picked ? picked.account : picked.failure);
  };

  it("picks in order, skipping excluded accounts, other providers and accounts cooling down", () => {
    const p = pool();
    expect(on(p, "openai")).toBe("o1");
    expect(on(p, "openai", ["o2", "o1"])).toBe("o2");
    expect(on(p, "openai", null, ["o1"])).toBe("o2");
    expect(on(p, "anthropic", ["o1", "o2"])).toBeNull();
    p.response("o1", 429, { "retry-after": "30" }, '{"error":{"message":"Rate limit reached"}}');
    expect(on(p, "openai")).toBe("o2");
    p.response("o2", 429, { "retry-after": "5" }, "slow down");
    // Every candidate cooling down: the one back first.
    expect(on(p, "openai")).toBe("o2");
  });

  it("passes over an account the provider refused a model, for that model only, until it is cleared or served", () => {
    const p = pool();
    p.turnEnded("o1", "pi", "gpt-5", { class: "unsupported-model", error: "403 The model `gpt-5` is not supported for this account." });
    expect(on(p, "openai")).toBe("o2");
    expect(on(p, "openai", null, [], "pi", "gpt-4.1")).toBe("o1");
    expect(p.views()[0]!.modelRefusals).toEqual([{ model: "gpt-5", class: "unsupported-model", at: expect.any(String), message: "403 The model `gpt-5` is not supported for this account." }]);
    // Every account of the scope refused it: a failure of the refusal's class that names each and its clear route.
    p.turnEnded("o2", "engine_b", "gpt-5", { class: "model-not-found", error: "404 model_not_found" });
    const none = on(p, "openai") as { class: string; error: string };
    expect(none.class).toBe("unsupported-model");
    expect(none.error).toContain("DELETE /accounts/o1/model-refusals/gpt-5");
    expect(none.error).toContain("DELETE /accounts/o2/model-refusals/gpt-5");
    expect(p.clearModelRefusal("o1", "gpt-5")).toMatchObject({ ok: true, value: { account: "o1", cleared: { model: "gpt-5", class: "unsupported-model" } } });
    expect(on(p, "openai")).toBe("o1");
    expect(p.clearModelRefusal("o1", "gpt-5")).toMatchObject({ ok: false, status: 404, body: { code: "model-refusal-not-found" } });
    expect(p.clearModelRefusal("nobody", "gpt-5")).toMatchObject({ ok: false, status: 404, body: { code: "account-not-found" } });
    // A turn of the model that ran on the account is the provider serving it again.
    p.turnEnded("o2", "pi", "gpt-5", null);
    expect(p.views()[2]!.modelRefusals).toEqual([]);
  });

  it("marks an engine_b allowance spent only for a spent answer, passes it over for engine_b alone, and resets it", () => {
    const p = pool();
    // A rate limit is class quota too, but the proxy saw a rate limit: nothing is spent.
    p.response("o1", 429, { "retry-after": "1" }, '{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached"}}');
    p.turnEnded("o1", "engine_b", "gpt-5", { class: "quota", error: "exceeded retry limit, last status: 429 Too Many Requests" });
    expect(p.views()[0]!.engineBCredit.state).toBe("available");
    p.response("o1", 429, {}, '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}');
    // A pi turn's spent quota is the health's cool-down, as before: no engine_b state.
    p.turnEnded("o1", "pi", "gpt-5", { class: "quota", error: "429 You exceeded your current quota" });
    expect(p.views()[0]!.engineBCredit.state).toBe("available");
    p.turnEnded("o1", "engine_b", "gpt-5", { class: "quota", error: "Quota exceeded. Check your plan and billing details." });
    expect(p.views()[0]!.engineBCredit).toMatchObject({ state: "spent", spentAt: expect.any(String), message: expect.stringContaining("Quota exceeded") });
    expect(on(p, "openai", ["o1", "o2"], [], "engine_b")).toBe("o2");
    expect((on(p, "openai", ["o1"], [], "engine_b") as { class: string; error: string }).class).toBe("quota");
    const reset = p.resetEngineBCredit("o1");
    expect(reset).toMatchObject({ ok: true, value: { account: "o1", reset: true, engineBCredit: { state: "available", resetAt: expect.any(String) } } });
    // Reset, and no longer cooling down from the spent answer: the next engine_b turn goes to it first.
    expect(on(p, "openai", ["o1", "o2"], [], "engine_b")).toBe("o1");
    expect(p.resetEngineBCredit("o1")).toMatchObject({ ok: true, value: { reset: false } });
    expect(p.resetEngineBCredit("nobody")).toMatchObject({ ok: false, status: 404, body: { code: "account-not-found" } });
  });

  it("records what the provider said, by class, and the organization it named", () => {
    const p = pool();
    p.response("o1", 401, {}, '{"error":{"code":"invalid_api_key"}}');
    p.response("a1", 429, {}, '{"error":{"type":"rate_limit_error","message":"You exceeded your current quota"}}');
    p.response("o2", 200, { "openai-organization": "org-42" }, "");
    const [o1, a1, o2] = p.views();
    // A refused credential is passed over for a while, so picks and completions skip it.
    expect(o1!.health.lastFailureClass).toBe("auth");
    expect(Date.parse(o1!.health.coolingDownUntil!)).toBeGreaterThan(Date.now() + 200_000);
    expect(a1!.health.lastFailureClass).toBe("quota");
    expect(Date.parse(a1!.health.coolingDownUntil!)).toBeGreaterThan(Date.now() + 50_000);
    expect(o2!.identity.accountId).toBe("org-42");
    expect(o2!.health.lastSuccessAt).not.toBeNull();
  });

  it("gives no access token for an API key, and counts every attempt against the rate", async () => {
    const p = pool();
    expect(await p.issueAccessToken("o1")).toMatchObject({ ok: false, status: 409, body: { code: "credential-not-available" } });
    expect(await p.issueAccessToken("o1")).toMatchObject({ ok: false, status: 409 });
    // The rate is 2 a minute: a third attempt is refused before the account is even looked at.
    expect(await p.issueAccessToken("o1")).toMatchObject({ ok: false, status: 429, body: { code: "access-token-rate-limited" }, headers: { "retry-after": expect.any(String) } });
    expect(await p.issueAccessToken("zz")).toMatchObject({ ok: false, status: 404, body: { code: "account-not-found" } });
  });

  it("takes a 401 on an OAuth login's access token as a token to refresh, not a refused login", async () => {
    // A token endpoint nobody listens on: a refresh shows as `unreachable`, the cached token as success.
    const login = { refreshToken: "rt-x", accessToken: "at-cached", expiresAt: Date.now() + 3_600_000, tokenUrl: "http://127.0.0.1:9/oauth/token" };
    const p = new AccountPool([{ id: "l1", provider: "openai", oauth: login }], new TokenStore(join(dir, "oauth-401.json")), providerUpstream(null), 2);
    expect(await p.credential("l1")).toMatchObject({ ok: true, credential: { secret: "at-cached" } });
    p.response("l1", 401, {}, '{"error":{"code":"token_expired"}}');
    const [view] = p.views();
    expect(view!.health.lastFailureClass).toBe("auth");
    expect(view!.health.coolingDownUntil ?? null).toBeNull();
    expect(await p.credential("l1")).toMatchObject({ ok: false, reason: "unreachable" });
  });

  it("keeps a newer token when a 401 answers a call made with the one it replaced, and cools a login whose brand-new token is refused", async () => {
    const login = { refreshToken: "rt-y", tokenUrl: "http://127.0.0.1:9/oauth/token" };
    const store = new TokenStore(join(dir, "oauth-401-fresh.json"));
    store.put("l2", login, { refreshToken: "rt-y2", accessToken: "at-new", expiresAt: Date.now() + 3_600_000, issuedAt: Date.now() });
    const p = new AccountPool([{ id: "l2", provider: "openai", oauth: login }], store, providerUpstream(null), 2);
    p.response("l2", 401, {}, "expired", "at-old");
    expect(await p.credential("l2")).toMatchObject({ ok: true, credential: { secret: "at-new" } });
    expect(p.views()[0]!.health.lastFailureClass ?? null).toBeNull();
    p.response("l2", 401, {}, '{"error":{"code":"account_deactivated"}}', "at-new");
    const [view] = p.views();
    expect(view!.health.lastFailureClass).toBe("auth");
    expect(Date.parse(view!.health.coolingDownUntil!)).toBeGreaterThan(Date.now());
  });
});

describe("the token store", () => {
  it("keeps a rotated refresh token until the accounts file holds a new login", () => {
    const store = new TokenStore(join(dir, "rotated.json"));
    const login = { refreshToken: "rt-original" };
    store.put("acct", login, { refreshToken: "rt-rotated", accessToken: "at", expiresAt: 1 });
    expect(new TokenStore(join(dir, "rotated.json")).get("acct", login).refreshToken).toBe("rt-rotated");
    expect(new TokenStore(join(dir, "rotated.json")).get("acct", { refreshToken: "rt-fresh-login" }).refreshToken).toBe("rt-fresh-login");
  });
});
