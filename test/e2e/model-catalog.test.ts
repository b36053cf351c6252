import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, events } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/** With no account, the simulator stands in for every provider: its catalog is the only one. */
const offlineData = mkdtempSync(join(tmpdir(), "agent-runtime-models-"));
writeFileSync(join(offlineData, "workspaces.json"), JSON.stringify({ workspaces: [{ name: "team", slug: "acme/team" }] }));
const offline = useFront({ dataDir: offlineData });

/** A fake account behind the TLS simulator: a real provider's setup, whose catalog the runtime cannot know. */
const accountData = mkdtempSync(join(tmpdir(), "agent-runtime-models-accounts-"));
writeFileSync(join(accountData, "accounts.json"), JSON.stringify({ accounts: [{ id: "live", provider: "openai", apiKey: "sk-live-models-aaa" }] }));
const withAccount = useFront({ dataDir: accountData, env: { SERVICE_PROVIDER_UPSTREAM: "simulator" } });

/** A host whose default model the simulator does not serve: the refusal names the setting, not the caller. */
const badDefault = useFront({ env: { SERVICE_DEFAULT_MODEL: "gpt-99" } });

const spawnOffline = (spec: Record<string, unknown>) => call(offline().url, "POST", "/spawn", spec);

function expectModelNotFound(res: { status: number; body: any }, model: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ code: "model-not-found", model });
  expect(res.body.models).toEqual(expect.arrayContaining(["sim-1", "sim-2", "sim-8k", "claude-sim"]));
  expect(res.body.error).toContain(JSON.stringify(model));
}

describe("one catalog while the simulator stands in", () => {
  it("spawns sim-2 and sim-8k, lists them in /v1/models and answers them through /v1/chat/completions", async () => {
    const base = offline().url;
    const listed = (await call(base, "GET", "/v1/models")).body.data.map((m: { id: string }) => m.id);
    for (const model of ["sim-2", "sim-8k"]) {
      const spawned = await spawnOffline({ model });
      expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
      expect(listed).toContain(model);
      expect((await call(base, "GET", `/v1/models/${model}`)).body).toMatchObject({ id: model, object: "model" });
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-workspace": "team" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).choices[0].message.content).toBe("echo: hello");
    }
    // Served but never listed: deprecated, or failing on purpose.
    expect(listed).not.toContain("sim-legacy");
    expect(listed).not.toContain("sim-broken");
    expect(listed).not.toContain("gpt-99");
  });

  it("refuses gpt-99 at spawn with 400 model-not-found listing the ids served, and creates nothing", async () => {
    const before = (await call(offline().url, "GET", "/threads")).body.threads.length;
    expectModelNotFound(await spawnOffline({ model: "gpt-99" }), "gpt-99");
    expectModelNotFound(await spawnOffline({ engine: "engine_b", model: "gpt-99" }), "gpt-99");
    expect((await call(offline().url, "GET", "/threads")).body.threads.length).toBe(before);
  });

  it("refuses an unknown model in a fallback chain, a seat join or replace, a fork and a workspace default", async () => {
    const base = offline().url;
    const chained = await spawnOffline({ model: "sim-1", fallback: ["sim-2", "gpt-99"] });
    expectModelNotFound(chained, "gpt-99");
    expect(chained.body.error).toMatch(/^fallback\[1\]: /);
    const id = (await spawnOffline({ model: "sim-1" })).body.threadId as string;
    expectModelNotFound(await call(base, "POST", `/threads/${id}/seats`, { name: "reviewer", model: "gpt-99" }), "gpt-99");
    expectModelNotFound(await call(base, "POST", `/threads/${id}/seats/replace`, { name: "main", model: "gpt-99" }), "gpt-99");
    expect((await call(base, "POST", `/threads/${id}/seats/replace`, { name: "main", model: "sim-2" })).status).toBe(200);
    expectModelNotFound(await call(base, "POST", `/threads/${id}/fork`, { atSeq: 1, model: "gpt-99" }), "gpt-99");
    const policy = await call(base, "PUT", "/workspaces/team/policy", { defaults: { model: "gpt-99" } });
    expectModelNotFound(policy, "gpt-99");
    expect(policy.body.error).toMatch(/^defaults\.model: /);
    expect((await call(base, "PUT", "/workspaces/team/policy", { defaults: { model: "sim-8k" } })).status).toBe(200);
  });

  it("takes a provider's model the simulator serves in its stead, and engine_a's family aliases", async () => {
    expect((await spawnOffline({ model: "gpt-5" })).status).toBe(201);
    // engine_a may not run on this machine (503); what matters is that the alias is no unknown model.
    const alias = await spawnOffline({ engine: "engine_a", model: "sonnet" });
    expect(alias.body.code).not.toBe("model-not-found");
    expect(await spawnOffline({ engine: "pi", model: "sonnet" })).toMatchObject({ status: 400, body: { code: "model-not-found" } });
  });
});

describe("a default model outside the catalog", () => {
  it("is refused at the spawn that names no model, and the sentence says it was the host's default", async () => {
    const res = await call(badDefault().url, "POST", "/spawn", {});
    expectModelNotFound(res, "gpt-99");
    expect(res.body.error).toMatch(/^model \(SERVICE_DEFAULT_MODEL, as none was named\): /);
    expect((await call(badDefault().url, "POST", "/spawn", { model: "sim-1" })).status).toBe(201);
  });
});

describe("with a provider account configured", () => {
  it("spawns a model no catalog here names, and records the provider's own refusal as the turn's failure", async () => {
    const base = withAccount().url;
    const spawned = await call(base, "POST", "/spawn", { model: "gpt-99" });
    expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
    const sent = await call(base, "POST", `/threads/${spawned.body.threadId}/send`, { text: "hello" });
    expect(sent.body).toMatchObject({ outcome: "failed", failure: { class: "model-not-found" } });
    expect((await events(base, spawned.body.threadId)).some((e) => e.kind === "turn-failed")).toBe(true);
  });
});
