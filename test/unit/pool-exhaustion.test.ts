import { describe, expect, it } from "vitest";
import type { AccountFailureClass, AccountView, Provider } from "../../src/api/accounts.js";
import { readConfig } from "../../src/platform/config.js";
import { exhaustion } from "../../src/rules/exhaustion.js";

/** w1 claims o2 and a1; w2 has no roster, so the unclaimed pool is o1, a2 and o3. */
const config = readConfig({
  SERVICE_ACCOUNTS: JSON.stringify([
    { id: "a1", provider: "anthropic" },
    { id: "o1", provider: "openai" },
    { id: "o2", provider: "openai" },
    { id: "a2", provider: "anthropic" },
    { id: "o3", provider: "openai" },
  ]),
  SERVICE_WORKSPACES: JSON.stringify({
    workspaces: [
      { name: "w1", slug: "o/one", accounts: ["o2", "a1"] },
      { name: "w2", slug: "o/two" },
    ],
  }),
});

const PROVIDER: Record<string, Provider> = { a1: "anthropic", o1: "openai", o2: "openai", a2: "anthropic", o3: "openai" };

function view(id: string, cooling: { until: string; at: string; cls?: AccountFailureClass } | null = null): AccountView {
  return {
    id,
    identity: { provider: PROVIDER[id]!, label: id, kind: "api-key", accountId: null },
    health: {
      lastSuccessAt: null,
      lastFailureAt: cooling?.at ?? null,
      lastFailureClass: cooling ? (cooling.cls ?? "quota") : null,
      lastFailure: cooling ? "spent" : null,
      coolingDownUntil: cooling?.until ?? null,
    },
    modelRefusals: [],
    engineBCredit: { state: "available", spentAt: null, message: null, resetAt: null },
  };
}

const healthy = () => ["a1", "o1", "o2", "a2", "o3"].map((id) => view(id));

describe("account-pool exhaustion", () => {
  it("has no episode while every pool has an account of each provider to call", () => {
    expect(exhaustion(config, healthy())).toEqual([]);
  });

  it("has none while one account of the provider is still usable", () => {
    const views = healthy().map((v) => (v.id === "o1" ? view("o1", { until: "2030-01-01T00:10:00.000Z", at: "2030-01-01T00:00:00.000Z" }) : v));
    expect(exhaustion(config, views)).toEqual([]);
  });

  it("opens one for the unclaimed pool when all its accounts of a provider cool down, from the latest failure to the earliest recovery", () => {
    const views = healthy().map((v) =>
      v.id === "o1"
        ? view("o1", { until: "2030-01-01T00:30:00.000Z", at: "2030-01-01T00:00:00.000Z", cls: "quota" })
        : v.id === "o3"
          ? view("o3", { until: "2030-01-01T00:20:00.000Z", at: "2030-01-01T00:05:00.000Z", cls: "rate-limit" })
          : v,
    );
    expect(exhaustion(config, views)).toEqual([
      {
        workspace: null,
        provider: "openai",
        accounts: [
          { id: "o1", lastFailureClass: "quota", coolingDownUntil: "2030-01-01T00:30:00.000Z" },
          { id: "o3", lastFailureClass: "rate-limit", coolingDownUntil: "2030-01-01T00:20:00.000Z" },
        ],
        since: "2030-01-01T00:05:00.000Z",
        until: "2030-01-01T00:20:00.000Z",
      },
    ]);
  });

  it("has no start when no account of the episode says when it failed", () => {
    const unknown = (id: string): AccountView => {
      const v = view(id, { until: "2030-01-01T01:00:00.000Z", at: "x" });
      return { ...v, health: { ...v.health, lastFailureAt: null } };
    };
    const views = healthy().map((v) => (v.id === "a1" ? unknown("a1") : v));
    expect(exhaustion(config, views)[0]).toMatchObject({ workspace: "w1", provider: "anthropic", since: null });
  });

  it("judges a workspace's roster apart from the unclaimed pool, and each provider apart", () => {
    const views = healthy().map((v) => (v.id === "a1" ? view("a1", { until: "2030-01-01T01:00:00.000Z", at: "2030-01-01T00:00:00.000Z", cls: "auth" }) : v));
    // a2 still serves the unclaimed pool; w1's only anthropic account is a1.
    expect(exhaustion(config, views)).toEqual([
      {
        workspace: "w1",
        provider: "anthropic",
        accounts: [{ id: "a1", lastFailureClass: "auth", coolingDownUntil: "2030-01-01T01:00:00.000Z" }],
        since: "2030-01-01T00:00:00.000Z",
        until: "2030-01-01T01:00:00.000Z",
      },
    ]);
  });

  it("lists rostered workspaces before the unclaimed pool, and gives a workspace without a roster no pool of its own", () => {
    const cool = { until: "2030-01-01T01:00:00.000Z", at: "2030-01-01T00:00:00.000Z" };
    const views = ["a1", "o1", "o2", "a2", "o3"].map((id) => view(id, cool));
    expect(exhaustion(config, views).map((e) => [e.workspace, e.provider])).toEqual([
      ["w1", "openai"],
      ["w1", "anthropic"],
      [null, "openai"],
      [null, "anthropic"],
    ]);
  });

  it("counts only the accounts the pool reports, and no provider a pool has no account of", () => {
    // o3 is missing from the views: o1 alone stands for the unclaimed openai accounts.
    const views = [view("o1", { until: "2030-01-01T00:10:00.000Z", at: "2030-01-01T00:00:00.000Z" }), view("a2"), view("o2"), view("a1")];
    expect(exhaustion(config, views).map((e) => [e.workspace, e.provider, e.accounts.map((a) => a.id)])).toEqual([[null, "openai", ["o1"]]]);
    expect(exhaustion(config, [])).toEqual([]);
  });

  it("treats the whole host as one pool when no workspaces are configured", () => {
    const cool = { until: "2030-01-01T00:10:00.000Z", at: "2030-01-01T00:00:00.000Z" };
    const views = healthy().map((v) => (PROVIDER[v.id] === "anthropic" ? view(v.id, cool) : v));
    expect(exhaustion({ ...config, workspaces: null }, views).map((e) => [e.workspace, e.provider, e.accounts.map((a) => a.id)])).toEqual([[null, "anthropic", ["a1", "a2"]]]);
  });
});
