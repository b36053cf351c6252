import { describe, expect, it } from "vitest";
import { CODES } from "../../src/api/errors.js";
import type { ThreadSpec } from "../../src/api/threads.js";
import { readConfig } from "../../src/platform/config.js";
import { accountRefusal, accountScope, scopedAccounts, turnAccount } from "../../src/rules/accounts.js";

/** The host's accounts in host order; w1 and w3 claim some of them, w2 has no roster. */
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
      { name: "w3", slug: "o/three", accounts: ["o1"] },
    ],
  }),
});

describe("which accounts a workspace's calls may run on", () => {
  it("is the workspace's roster, in its order, when it has one", () => {
    expect(accountScope(config, "w1")).toEqual({ only: ["o2", "a1"], exclude: [] });
    expect(scopedAccounts(config, accountScope(config, "w1"))).toEqual(["o2", "a1"]);
  });

  it("is every account no workspace claims, in host order, for a workspace without a roster, no workspace, or an unknown one", () => {
    for (const workspace of ["w2", null, "nowhere"]) {
      expect(accountScope(config, workspace), String(workspace)).toEqual({ only: null, exclude: ["o2", "a1", "o1"] });
      expect(scopedAccounts(config, accountScope(config, workspace)), String(workspace)).toEqual(["a2", "o3"]);
    }
  });

  it("is every account of the host when no workspaces are configured", () => {
    const bare = { ...config, workspaces: null };
    expect(accountScope(bare, null)).toEqual({ only: null, exclude: [] });
    expect(scopedAccounts(bare, accountScope(bare, "w1"))).toEqual(["a1", "o1", "o2", "a2", "o3"]);
  });

  it("drops excluded accounts from a roster too", () => {
    expect(scopedAccounts(config, { only: ["o3", "a2", "o1"], exclude: ["a2"] })).toEqual(["o3", "o1"]);
  });
});

describe("refusing the account a spawn names", () => {
  it("passes a spawn that names none", () => {
    expect(accountRefusal(config, null, "engine_a", "sonnet")).toBeNull();
  });

  it("takes any name as a label when the host configures no accounts", () => {
    expect(accountRefusal(readConfig({}), "anything", "engine_b", "gpt-5")).toBeNull();
  });

  it("refuses an account the host does not have with 400 unknown-account, listing the host's", () => {
    const r = accountRefusal(config, "zz", "pi", "gpt-5");
    expect(r?.status).toBe(400);
    expect(r?.body).toMatchObject({ code: CODES.unknownAccount, accounts: ["a1", "o1", "o2", "a2", "o3"] });
  });

  it("refuses an account of another provider than the engine and model need with 400 account-provider-mismatch", () => {
    const wrong: [string, ThreadSpec["engine"], string, string, string][] = [
      ["o1", "engine_a", "sonnet", "openai", "anthropic"],
      ["a1", "engine_b", "gpt-5", "anthropic", "openai"],
      ["a1", "pi", "gpt-5", "anthropic", "openai"],
      ["o1", "pi", "claude-opus-4-1", "openai", "anthropic"],
    ];
    for (const [account, engine, model, provider, needed] of wrong) {
      const r = accountRefusal(config, account, engine, model);
      expect(r?.status, `${account} ${engine} ${model}`).toBe(400);
      expect(r?.body, `${account} ${engine} ${model}`).toMatchObject({ code: CODES.accountProviderMismatch, provider, needed });
    }
  });

  it("passes an account of the provider the engine and model need", () => {
    expect(accountRefusal(config, "a1", "engine_a", "opus")).toBeNull();
    expect(accountRefusal(config, "o1", "engine_b", "gpt-5")).toBeNull();
    expect(accountRefusal(config, "a2", "pi", "haiku")).toBeNull();
    expect(accountRefusal(config, "o3", "pi", "sim-1")).toBeNull();
  });
});

describe("which account a turn runs on", () => {
  const spec: ThreadSpec = {
    workspace: "w1",
    title: null,
    role: "chat",
    type: "chat",
    engine: "engine_a",
    model: "sonnet",
    permissions: "ask",
    cwd: null,
    account: "a1",
    proxyEnv: null,
    fallback: [{ engine: "pi", model: "gpt-5" }],
    approvalTimeoutMs: null,
    questionTimeoutMs: null,
    onBusy: "queue",
  };

  it("is the thread's own account while it serves the turn's provider", () => {
    expect(turnAccount(config, spec, "engine_a", "sonnet")).toEqual({ account: "a1", accountChoice: { only: ["o2", "a1"], exclude: [] } });
    expect(turnAccount(config, spec, "pi", "haiku").account).toBe("a1");
  });

  it("is left to the engine host, within the thread's scope, after a failover to another provider or for an account the host lacks", () => {
    expect(turnAccount(config, spec, "pi", "gpt-5")).toEqual({ account: null, accountChoice: { only: ["o2", "a1"], exclude: [] } });
    expect(turnAccount(config, { ...spec, account: "gone" }, "engine_a", "sonnet").account).toBeNull();
    expect(turnAccount(config, { ...spec, account: null, workspace: null }, "engine_a", "sonnet")).toEqual({
      account: null,
      accountChoice: { only: null, exclude: ["o2", "a1", "o1"] },
    });
  });
});
