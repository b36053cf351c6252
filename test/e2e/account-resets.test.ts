import { mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { answerProblem } from "../support/answer-check.js";
import { call, sim } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/**
 * Refused models and engine_b credit on the account pool, and their operator routes
 * (docs/credentials.md, "Refused models and engine_b credit"), against the simulator
 * standing in for the providers. It names each account's organization `org-<id>`, so a
 * `failOrgs` directive fails a call on one account only; a turn that completes under
 * `{"fail": "server", "failOrgs": [X]}` ran on an account other than X.
 */
const ALLOWED_HOST = "runtime.example.test";
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-resets-"));
writeFileSync(
  join(dataDir, "accounts.json"),
  JSON.stringify({
    accounts: [
      { id: "oa-1", provider: "openai", apiKey: "sk-test-one" },
      { id: "oa-2", provider: "openai", apiKey: "sk-test-two" },
    ],
  }),
);
const front = useFront({ dataDir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_ALLOWED_HOSTS: ALLOWED_HOST } });

/** A directive that fails the call if it lands on `account`: the turn completes only elsewhere. */
const notOn = (account: string, text = "go") => sim({ fail: "server", failOrgs: [`org-${account}`] }, text);

async function turn(spec: Record<string, unknown>, text: string, threadId?: string): Promise<{ threadId: string; outcome: string; failure: { class: string; error: string } | undefined }> {
  let id = threadId;
  if (!id) {
    const spawned = await call(front().url, "POST", "/spawn", { permissions: "allow", ...spec });
    expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
    id = spawned.body.threadId as string;
  }
  const sent = await call(front().url, "POST", `/threads/${id}/send`, { text });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return { threadId: id, outcome: sent.body.outcome, failure: sent.body.failure };
}

async function account(id: string): Promise<any> {
  const res = await call(front().url, "GET", "/accounts");
  expect(res.status).toBe(200);
  return res.body.accounts.find((a: { id: string }) => a.id === id);
}

interface Raw {
  status: number;
  body: any;
}

/** A request with the headers `fetch` will not let a caller forge (Host, Origin), its answer held to the contract as `call`'s are. */
function raw(method: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(front().url + path, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        const body = text ? JSON.parse(text) : null;
        const problem = answerProblem(front().url, method, path, res.statusCode!, String(res.headers["content-type"] ?? ""), body);
        if (problem) reject(new Error(`the answer breaks the contract: ${problem}`));
        else resolve({ status: res.statusCode!, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("a model the provider refused an account", () => {
  it("is recorded on the account, the next turn of that model runs on another, and the clear makes it eligible again", { timeout: 120_000 }, async () => {
    // oa-1 comes first in the file, so it takes a turn when nothing passes it over.
    const refused = await turn({ engine: "pi", model: "sim-2" }, sim({ fail: "unsupported-model", failOrgs: ["org-oa-1"] }));
    expect(refused.outcome).toBe("failed");
    expect(refused.failure?.class).toBe("unsupported-model");
    expect((await account("oa-1")).modelRefusals).toEqual([{ model: "sim-2", class: "unsupported-model", at: expect.any(String), message: expect.stringContaining("not supported") }]);
    expect((await account("oa-2")).modelRefusals).toEqual([]);

    // The same thread's next turn of sim-2 runs on oa-2; another model still runs on oa-1.
    expect((await turn({}, notOn("oa-1"), refused.threadId)).outcome).toBe("completed");
    expect((await turn({ engine: "pi", model: "sim-3" }, notOn("oa-2"))).outcome).toBe("completed");

    // Refused on every account of the scope: the turn fails before any call, naming each refusal and its clear.
    expect((await turn({}, sim({ fail: "model-not-found", failOrgs: ["org-oa-2"] }), refused.threadId)).failure?.class).toBe("model-not-found");
    const none = await turn({}, "hello", refused.threadId);
    expect(none.outcome).toBe("failed");
    expect(none.failure?.class).toBe("unsupported-model");
    expect(none.failure?.error).toContain("DELETE /accounts/oa-1/model-refusals/sim-2");
    expect(none.failure?.error).toContain("DELETE /accounts/oa-2/model-refusals/sim-2");

    const cleared = await call(front().url, "DELETE", "/accounts/oa-1/model-refusals/sim-2");
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ account: "oa-1", cleared: { model: "sim-2", class: "unsupported-model", at: expect.any(String), message: expect.any(String) } });
    expect((await account("oa-1")).modelRefusals).toEqual([]);
    expect((await turn({}, notOn("oa-2"), refused.threadId)).outcome).toBe("completed");

    const again = await call(front().url, "DELETE", "/accounts/oa-1/model-refusals/sim-2");
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("model-refusal-not-found");
    const stranger = await call(front().url, "DELETE", "/accounts/oa-9/model-refusals/sim-2");
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe("account-not-found");
  });
});

describe("an engine_b allowance the provider says is spent", () => {
  it("shows on the account, keeps engine_b turns off it, and the reset sends the next engine_b turn there at once", { timeout: 180_000 }, async () => {
    const spent = await turn({ engine: "engine_b", model: "gpt-sim" }, sim({ fail: "quota", failOrgs: ["org-oa-1"] }));
    expect(spent.outcome).toBe("failed");
    expect(spent.failure?.class).toBe("quota");
    const oa1 = await account("oa-1");
    expect(oa1.engineBCredit).toEqual({ state: "spent", spentAt: expect.any(String), message: expect.any(String), resetAt: null });
    expect((await account("oa-2")).engineBCredit.state).toBe("available");

    expect((await turn({}, notOn("oa-1"), spent.threadId)).outcome).toBe("completed");

    const reset = await call(front().url, "POST", "/accounts/oa-1/engine-b/credit-reset");
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ account: "oa-1", reset: true, engineBCredit: { state: "available", spentAt: null, message: null, resetAt: expect.any(String) } });
    expect((await account("oa-1")).health.coolingDownUntil).toBeNull();
    // Within the minute the spent answer would have cooled it down: the reset is what puts it first again.
    expect((await turn({}, notOn("oa-2"), spent.threadId)).outcome).toBe("completed");

    const idle = await call(front().url, "POST", "/accounts/oa-2/engine-b/credit-reset");
    expect(idle.body).toMatchObject({ account: "oa-2", reset: false, engineBCredit: { state: "available" } });
    const stranger = await call(front().url, "POST", "/accounts/oa-9/engine-b/credit-reset");
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe("account-not-found");
  });
});

describe("the reset routes answer programs on this machine only", () => {
  const port = () => new URL(front().url).port;
  const routes = [
    ["POST", "/accounts/oa-2/engine-b/credit-reset"],
    ["DELETE", "/accounts/oa-2/model-refusals/sim-mini"],
  ] as const;

  it("refuses a foreign Host, a Host SERVICE_ALLOWED_HOSTS allows, and any browser page, changing nothing", { timeout: 60_000 }, async () => {
    // A thread of its own account: the refusal is oa-2's whatever the tests before left cooling down.
    const refused = await turn({ engine: "pi", model: "sim-mini", account: "oa-2" }, sim({ fail: "unsupported-model" }));
    expect(refused.failure?.class).toBe("unsupported-model");
    for (const [method, path] of routes) {
      const foreign = await raw(method, path, { host: `attacker.example:${port()}` });
      expect([foreign.status, foreign.body.code], `${method} ${path}`).toEqual([403, "untrusted-caller"]);
      // Every other route answers this name.
      expect((await raw("GET", "/accounts", { host: `${ALLOWED_HOST}:${port()}` })).status).toBe(200);
      const allowed = await raw(method, path, { host: `${ALLOWED_HOST}:${port()}` });
      expect([allowed.status, allowed.body.code], `${method} ${path}`).toEqual([403, "caller-not-local"]);
      // The runtime's own page and the application server's: allowed origins everywhere else.
      for (const origin of [`http://127.0.0.1:${port()}`, "http://127.0.0.1:5189", "https://attacker.example"]) {
        const page = await raw(method, path, { host: `127.0.0.1:${port()}`, origin });
        expect([page.status, page.body.code], `${method} ${path} from ${origin}`).toEqual([403, origin.startsWith("https://attacker") ? "untrusted-caller" : "caller-not-local"]);
      }
    }
    expect((await account("oa-2")).modelRefusals.map((r: { model: string }) => r.model)).toContain("sim-mini");
  });

  it("serves a loopback caller with no Origin, the client library's calls included", async () => {
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`]) {
      const reset = await raw("POST", "/accounts/oa-2/engine-b/credit-reset", { host });
      expect([reset.status, reset.body.account], host).toEqual([200, "oa-2"]);
    }
    // The client library, a program on this machine, sends no browser header.
    const cleared = await front().client.clearModelRefusal("oa-2", "sim-mini");
    expect(cleared).toMatchObject({ account: "oa-2", cleared: { model: "sim-mini", class: "unsupported-model" } });
    await expect(front().client.clearModelRefusal("oa-2", "sim-mini")).rejects.toMatchObject({ status: 404, code: "model-refusal-not-found" });
    expect(await front().client.resetEngineBCredit("oa-2")).toMatchObject({ account: "oa-2", reset: false });
    expect((await account("oa-2")).modelRefusals.map((r: { model: string }) => r.model)).not.toContain("sim-mini");
  });
});
