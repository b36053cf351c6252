import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call } from "../support/http.js";

let front: Front;
let base: string;
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-ws-"));

beforeAll(async () => {
  writeFileSync(
    join(dataDir, "workspaces.json"),
    JSON.stringify({
      workspaces: [
        { name: "alpha", slug: "acme/alpha", accounts: ["acct-a1", "acct-a2"], allowedModels: ["sim-1", "sim-2"], policy: { defaults: { model: "sim-2", permissions: "allow" } } },
        { name: "beta", slug: "acme/beta", accounts: ["acct-b1"] },
      ],
    }),
  );
  front = await startFront({ dataDir });
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(dataDir);
});

describe("workspaces configured in workspaces.json", () => {
  it("lists them, shows one with its slug, policy and head, and refuses an unknown one", async () => {
    const list = (await call(base, "GET", "/workspaces")).body.workspaces;
    expect(list.map((w: { name: string }) => w.name)).toEqual(["alpha", "beta"]);
    const alpha = (await call(base, "GET", "/workspaces/alpha")).body;
    expect(alpha).toMatchObject({ name: "alpha", slug: "acme/alpha", policy: { defaults: { model: "sim-2" } }, head: null });
    const unknown = await call(base, "GET", "/workspaces/gamma");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "workspace-not-found", workspaces: ["alpha", "beta"] });
    expect((await call(base, "POST", "/spawn", { workspace: "gamma" })).body.code).toBe("workspace-not-found");
  });

  it("fills a spawn's omitted fields from the policy, and a new policy replaces it durably", async () => {
    const { threadId } = (await call(base, "POST", "/spawn", { workspace: "alpha" })).body;
    expect((await call(base, "GET", `/threads/${threadId}`)).body.spec).toMatchObject({ model: "sim-2", permissions: "allow" });
    const bad = await call(base, "PUT", "/workspaces/alpha/policy", { defaults: { permissions: "sometimes" } });
    expect(bad.status).toBe(400);
    const outside = await call(base, "PUT", "/workspaces/alpha/policy", { defaults: { model: "sim-9" } });
    expect(outside.body).toMatchObject({ code: "model-not-allowed" });
    expect((await call(base, "PUT", "/workspaces/alpha/policy", { defaults: { account: "acct-b1" } })).body.code).toBe("account-not-in-roster");
    expect((await call(base, "GET", "/workspaces/alpha")).body.policy.defaults.model).toBe("sim-2");
    expect((await call(base, "PUT", "/workspaces/alpha/policy", { defaults: { model: "sim-1", permissions: "ask" } })).status).toBe(200);
    const next = (await call(base, "POST", "/spawn", { workspace: "alpha" })).body.threadId;
    expect((await call(base, "GET", `/threads/${next}`)).body.spec).toMatchObject({ model: "sim-1", permissions: "ask" });
  });

  it("gives a spawn the policy's wait timeouts and busy-thread default, which the spawn's own override", async () => {
    const policy = (await call(base, "GET", "/workspaces/beta")).body.policy;
    expect((await call(base, "PUT", "/workspaces/beta/policy", { defaults: { ...policy.defaults, approvalTimeoutMs: 60_000, questionTimeoutMs: 120_000, onBusy: "interrupt" } })).status).toBe(200);
    const inherited = (await call(base, "POST", "/spawn", { workspace: "beta" })).body.threadId;
    expect((await call(base, "GET", `/threads/${inherited}`)).body.spec).toMatchObject({ approvalTimeoutMs: 60_000, questionTimeoutMs: 120_000, onBusy: "interrupt" });
    const own = (await call(base, "POST", "/spawn", { workspace: "beta", approvalTimeoutMs: 5_000 })).body.threadId;
    expect((await call(base, "GET", `/threads/${own}`)).body.spec).toMatchObject({ approvalTimeoutMs: 5_000, questionTimeoutMs: 120_000 });
    expect((await call(base, "PUT", "/workspaces/beta/policy", { defaults: { approvalTimeoutMs: 10 } })).status).toBe(400);
    expect((await call(base, "PUT", "/workspaces/beta/policy", policy)).status).toBe(200);
  });

  it("refuses accounts outside the roster and models outside the allowed list, naming what is allowed", async () => {
    const account = await call(base, "POST", "/spawn", { workspace: "alpha", account: "acct-b1" });
    expect(account.status).toBe(400);
    expect(account.body).toMatchObject({ code: "account-not-in-roster", accounts: ["acct-a1", "acct-a2"] });
    const claimed = await call(base, "POST", "/spawn", { account: "acct-b1" });
    expect(claimed.body).toMatchObject({ code: "account-not-in-roster", workspace: "beta", accounts: ["acct-b1"] });
    const model = await call(base, "POST", "/spawn", { workspace: "alpha", model: "sim-9" });
    expect(model.status).toBe(400);
    expect(model.body).toMatchObject({ code: "model-not-allowed", allowedModels: ["sim-1", "sim-2"] });
    expect((await call(base, "POST", "/spawn", { workspace: "alpha", account: "acct-a1" })).status).toBe(201);
  });

  it("keeps exactly one head: a second is refused, retiring to chat frees the slot, restoring into a taken slot is refused", async () => {
    const first = (await call(base, "POST", "/spawn", { workspace: "beta", role: "head" })).body.threadId;
    expect((await call(base, "GET", "/workspaces/beta/head")).body.head).toBe(first);
    const second = await call(base, "POST", "/spawn", { workspace: "beta", role: "head" });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: "head-taken", head: first });

    const chat = (await call(base, "POST", "/spawn", { workspace: "beta" })).body.threadId;
    const notHead = await call(base, "POST", `/threads/${chat}/role`, { role: "chat" });
    expect(notHead.status).toBe(409);
    expect(notHead.body.code).toBe("not-a-head");
    expect((await call(base, "POST", `/threads/${first}/role`, { role: "worker" })).status).toBe(400);
    expect((await call(base, "POST", `/threads/${first}/role`, { role: "chat" })).status).toBe(200);
    expect((await call(base, "GET", `/threads/${first}`)).body.role).toBe("chat");

    const headB = (await call(base, "POST", "/spawn", { workspace: "beta", role: "head" })).body.threadId;
    expect((await call(base, "DELETE", `/threads/${headB}?reason=pause`)).status).toBe(200);
    const headC = (await call(base, "POST", "/spawn", { workspace: "beta", role: "head" })).body.threadId;
    const restore = await call(base, "POST", `/threads/${headB}/restore`);
    expect(restore.status).toBe(409);
    expect(restore.body).toMatchObject({ code: "head-taken", head: headC });
  });

  it("holds a fork to the same rules, and answers 404 for the index of an unknown workspace", async () => {
    const parent = (await call(base, "POST", "/spawn", { workspace: "alpha" })).body.threadId;
    const fork = await call(base, "POST", `/threads/${parent}/fork`, { atSeq: 1, model: "sim-9" });
    expect(fork.body).toMatchObject({ code: "model-not-allowed" });
    const moved = await call(base, "POST", `/threads/${parent}/fork`, { atSeq: 1, workspace: "gamma" });
    expect(moved.body.code).toBe("workspace-not-found");
    expect((await call(base, "GET", "/workspaces/gamma/approvals")).status).toBe(404);
    expect((await call(base, "GET", "/workspaces/default/approvals")).status).toBe(200);
  });

  it("refuses to start on a malformed workspaces.json, saying what is wrong", async () => {
    const bad = mkdtempSync(join(tmpdir(), "agent-runtime-ws-bad-"));
    writeFileSync(join(bad, "workspaces.json"), JSON.stringify({ workspaces: [{ name: "x", slug: "not a slug" }] }));
    await expect(startFront({ dataDir: bad })).rejects.toThrow(/workspaces\.json: workspaces\.0\.slug: slug is owner\/repo/);
    removeDir(bad);
  });
});
