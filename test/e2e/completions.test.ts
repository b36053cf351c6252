import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { useFront } from "../support/use-front.js";
import { call, events, sim } from "../support/http.js";

/** Refusals that move a call to the next account; each gets a workspace of two accounts. */
const FAILS = ["quota", "auth", "rate-limit"];
const ACCOUNTS = {
  accounts: [
    { id: "c-first", provider: "openai", apiKey: "sk-live-first-aaa" },
    { id: "c-second", provider: "openai", apiKey: "sk-live-second-bbb" },
    { id: "c-claude", provider: "anthropic", apiKey: "sk-ant-live-ccc" },
    { id: "r-only", provider: "openai", apiKey: "sk-live-ronly-ddd" },
    { id: "s-only", provider: "openai", apiKey: "sk-live-sonly-eee" },
    ...FAILS.flatMap((f) => [
      { id: `${f}-a`, provider: "openai", apiKey: `sk-live-${f}-a` },
      { id: `${f}-b`, provider: "openai", apiKey: `sk-live-${f}-b` },
    ]),
  ],
};
const WORKSPACES = {
  workspaces: [
    { name: "team", slug: "acme/team", accounts: ["c-first", "c-second", "c-claude"] },
    { name: "claude-only", slug: "acme/claude", accounts: ["c-claude"] },
    { name: "ratelimited", slug: "acme/rl", accounts: ["r-only"] },
    { name: "spent", slug: "acme/spent", accounts: ["s-only"] },
    ...FAILS.map((f) => ({ name: `fo-${f}`, slug: `acme/fo-${f}`, accounts: [`${f}-a`, `${f}-b`] })),
  ],
};

let front: Front;
const client = (workspace: string | null, extra: Record<string, string> = {}) =>
  new OpenAI({
    apiKey: "unused-by-the-runtime",
    baseURL: `${front.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { ...(workspace ? { "x-service-workspace": workspace } : {}), ...extra },
  });

/** The `completion` events of a workspace's completions thread, oldest first. */
async function completionEvents(workspace: string): Promise<any[]> {
  const list = await call(front.url, "GET", `/threads?type=completions&workspace=${workspace}&archived=all`);
  const thread = list.body.threads[0];
  if (!thread) return [];
  return (await events(front.url, thread.id)).filter((e) => e.kind === "completion").map((e) => e.body);
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; headers: Headers; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return { status: e.status!, code: String(e.code), headers: e.headers as Headers, message: e.message };
  }
  throw new Error("the call succeeded");
}

/** A data directory holding this file's accounts and workspaces. */
function configuredDataDir(prefix: string): string {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify(ACCOUNTS));
  writeFileSync(join(dataDir, "workspaces.json"), JSON.stringify(WORKSPACES));
  return dataDir;
}

beforeAll(async () => {
  const dataDir = configuredDataDir("agent-runtime-completions-");
  // SERVICE_CATALOG_SYNC_MS: the completions thread shows in the list at once.
  front = await startFront({ dataDir, env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_CATALOG_SYNC_MS: "20" } });
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
});

describe("POST /v1/chat/completions with the official openai client", () => {
  it("answers one chat.completion and records one completion event", async () => {
    const r = await client("team", { "x-service-session": "review-bot#12" }).chat.completions.create({
      model: "sim-1",
      messages: [{ role: "user", content: "hello there" }],
    });
    expect(r.object).toBe("chat.completion");
    expect(r.choices[0]!.message.content).toBe("echo: hello there");
    expect(r.usage!.total_tokens).toBeGreaterThan(0);
    const recorded = await completionEvents("team");
    expect(recorded.at(-1)).toMatchObject({
      model: "sim-1",
      account: "c-first",
      outcome: "completed",
      traffic: "work",
      session: "review-bot#12",
      stream: false,
      usage: { totalTokens: r.usage!.total_tokens },
      attempts: [{ account: "c-first", status: 200, outcome: "ok" }],
    });
    expect(recorded.at(-1).latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("streams chunks, the usage chunk last when asked, and ends with [DONE]", async () => {
    const stream = await client("team", { "x-service-traffic": "smoke" }).chat.completions.create({
      model: "sim-1",
      messages: [{ role: "user", content: sim({ chunks: 4 }, "one two three four") }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const chunks: any[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    expect(text).toBe("echo: one two three four");
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
    const last = (await completionEvents("team")).at(-1);
    expect(last).toMatchObject({ outcome: "completed", stream: true, traffic: "smoke", account: "c-first" });
    expect(last.usage.totalTokens).toBe(chunks.at(-1).usage.total_tokens);
  });

  it("leaves the usage chunk out when the caller did not ask for it, and still records usage", async () => {
    const stream = await client("team").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "hi" }], stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.choices.length > 0 && !("usage" in c))).toBe(true);
    expect((await completionEvents("team")).at(-1).usage.totalTokens).toBeGreaterThan(0);
  });

  for (const fail of FAILS)
    it(`fails over from an account the provider refuses (${fail}) to the next one`, async () => {
      const ws = `fo-${fail}`;
      const r = await client(ws).chat.completions.create({
        model: "sim-1",
        messages: [{ role: "user", content: sim({ fail, failOrgs: [`org-${fail}-a`] }, `after ${fail}`) }],
      });
      expect(r.choices[0]!.message.content).toBe(`echo: after ${fail}`);
      const last = (await completionEvents(ws)).at(-1);
      expect(last.account).toBe(`${fail}-b`);
      expect(last.attempts.map((a: any) => [a.account, a.outcome])).toEqual([
        [`${fail}-a`, fail],
        [`${fail}-b`, "ok"],
      ]);
      // The refused account cools down, so the next call starts on the good one.
      const health = (await call(front.url, "GET", "/accounts")).body.accounts.find((a: any) => a.id === `${fail}-a`).health;
      expect(health.coolingDownUntil).not.toBeNull();
      const next = await client(ws).chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "again" }] });
      expect(next.choices[0]!.message.content).toBe("echo: again");
      expect((await completionEvents(ws)).at(-1).attempts).toEqual([{ account: `${fail}-b`, status: 200, outcome: "ok" }]);
    });

  it("routes a model of the other provider to the workspace's account of that provider", async () => {
    const r = await client("team").chat.completions.create({ model: "claude-sim", messages: [{ role: "user", content: "bonjour" }] });
    expect(r.choices[0]!.message.content).toBe("echo: bonjour");
    expect((await completionEvents("team")).at(-1).account).toBe("c-claude");
  });
});

describe("every refusal, in the completions error shape", () => {
  it("400 unknown_workspace: no header and no default, or a workspace the host does not have", async () => {
    expect(await refusal(client(null).chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 400,
      code: "unknown_workspace",
    });
    expect(await refusal(client("nowhere").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 400,
      code: "unknown_workspace",
    });
  });

  it("400 for an image, tools, a session label over 128 characters, or a bad traffic kind", async () => {
    const image = await refusal(
      client("team").chat.completions.create({
        model: "sim-1",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }],
      }),
    );
    expect(image).toMatchObject({ status: 400, code: "image_not_supported" });
    expect(image.message).toContain("image_url");
    const tools = await refusal(
      client("team").chat.completions.create({
        model: "sim-1",
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "f", parameters: {} } }],
      }),
    );
    expect(tools).toMatchObject({ status: 400, code: "tools_not_supported" });
    const long = await refusal(client("team", { "x-service-session": "x".repeat(129) }).chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }));
    expect(long).toMatchObject({ status: 400, code: "session_label_too_long" });
    const traffic = await refusal(client("team", { "x-service-traffic": "bulk" }).chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }));
    expect(traffic).toMatchObject({ status: 400, code: "invalid_traffic_kind" });
  });

  it("400 invalid_request for a body nested deeper than 128 levels, which the account pool could not even serialize", async () => {
    // Found by the fuzz test: 5,000 levels in a field the endpoint passes through answered 500 internal_error.
    const deep = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
    const ask = (extra: string) =>
      fetch(`${front.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-workspace": "team" },
        body: `{"model":"sim-1","messages":[{"role":"user","content":"x"}],"metadata":${extra}}`,
      });
    const refused = await ask(deep(5000));
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("128 levels") });
    expect((await ask(deep(100))).status).toBe(200);
  });

  it("404 model_not_found", async () => {
    expect(await refusal(client("team").chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 404,
      code: "model_not_found",
    });
  });

  it("409 no_eligible_account: no account of the workspace serves the model's provider", async () => {
    expect(await refusal(client("claude-only").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 409,
      code: "no_eligible_account",
    });
  });

  it("429 rate_limited with the provider's Retry-After, then while it cools down", async () => {
    const first = await refusal(
      client("ratelimited").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: sim({ fail: "rate-limit", retryAfter: 7 }) }] }),
    );
    expect(first).toMatchObject({ status: 429, code: "rate_limited" });
    expect(first.headers.get("retry-after")).toBe("7");
    const again = await refusal(client("ratelimited").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }));
    expect(again).toMatchObject({ status: 429, code: "rate_limited" });
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("429 accounts_exhausted when every account refused, then 409 no_spendable_account while they are spent", async () => {
    const spent = await refusal(
      client("spent").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: sim({ fail: "quota" }) }] }),
    );
    expect(spent).toMatchObject({ status: 429, code: "accounts_exhausted" });
    const after = await refusal(client("spent").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: "x" }] }));
    expect(after).toMatchObject({ status: 409, code: "no_spendable_account" });
    const recorded = await completionEvents("spent");
    expect(recorded.map((e) => [e.outcome, e.code])).toEqual([
      ["failed", "accounts_exhausted"],
      ["failed", "no_spendable_account"],
    ]);
  });

  /** A streamed call whose provider fails after its first delta, read raw. */
  async function failedStream(fail: string, workspace = "team"): Promise<{ res: Response; body: string }> {
    const res = await fetch(`${front.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-workspace": workspace },
      body: JSON.stringify({ model: "sim-1", stream: true, messages: [{ role: "user", content: sim({ fail, chunks: 4 }, "a b c d") }] }),
    });
    return { res, body: await res.text() };
  }

  // The provider's error frame (`stream-error`), a body that just stops (`stream-end`), a dropped socket.
  for (const fail of ["stream-error", "stream-end", "disconnect"])
    it(`a provider failing after its stream began (${fail}) is one error frame, no [DONE], and a failed completion`, async () => {
      const { res, body } = await failedStream(fail);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const frames = body.trim().split("\n\n");
      const errors = frames.filter((f) => f.startsWith('data: {"error"'));
      expect(errors).toHaveLength(1);
      expect(frames.at(-1)).toBe(errors[0]);
      expect(JSON.parse(errors[0]!.slice(6))).toMatchObject({ error: { type: "api_error", code: "upstream_error" } });
      // The piece that arrived before the failure was relayed; nothing after it.
      expect(frames.filter((f) => f.includes('"content":"echo"')).length).toBe(1);
      expect(frames).not.toContain("data: [DONE]");
      expect((await completionEvents("team")).at(-1)).toMatchObject({ outcome: "failed", code: "upstream_error", stream: true, account: "c-first" });
    });

  it("the openai SDK sees a mid-stream failure as an error, never as the end of the answer", async () => {
    const stream = await client("team").chat.completions.create({ model: "sim-1", stream: true, messages: [{ role: "user", content: sim({ fail: "stream-error" }, "x y z") }] });
    let text = "";
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain("The provider failed mid-stream");
    expect(text).toBe("echo");
  });

  it("does not fail over once the provider's stream began: the next account would write the answer again", async () => {
    const { body } = await failedStream("stream-error", "fo-quota");
    expect(body.trim().split("\n\n")).not.toContain("data: [DONE]");
    const last = (await completionEvents("fo-quota")).at(-1);
    expect(last).toMatchObject({ outcome: "failed", code: "upstream_error" });
    expect(last.attempts).toEqual([{ account: last.account, status: 200, outcome: "ok" }]);
  });

  it("a non-streamed answer cut short is an upstream error, not a completion", async () => {
    for (const fail of ["stream-end", "disconnect"]) {
      const err = await refusal(client("team").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: sim({ fail }, "half") }] }));
      expect(err).toMatchObject({ status: 502, code: "upstream_error" });
      expect((await completionEvents("team")).at(-1)).toMatchObject({ outcome: "failed", code: "upstream_error", stream: false });
    }
  });

  it("an overloaded provider (503 before the stream) is an upstream error in the completions shape", async () => {
    const err = await refusal(client("team").chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: sim({ fail: "overloaded" }, "busy") }] }));
    expect(err).toMatchObject({ status: 502, code: "upstream_error" });
    expect(err.message).toContain("503");
  });
});

describe("GET /v1/models", () => {
  it("lists the routable models without deprecated ones", async () => {
    const models = await client("team").models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["sim-1", "claude-sim", "gpt-4.1"]));
    expect(ids).not.toContain("sim-legacy");
    expect(ids).not.toContain("gpt-4");
  });
});

describe("GET /v1/models/:id", () => {
  it("retrieves one model with the SDK's models.retrieve, a deprecated one too", async () => {
    const openai = client("team");
    expect(await openai.models.retrieve("claude-sim")).toEqual({ id: "claude-sim", object: "model", created: expect.any(Number), owned_by: "anthropic" });
    expect(await openai.models.retrieve("gpt-4")).toMatchObject({ id: "gpt-4", object: "model", owned_by: "openai" });
    const listed = (await openai.models.list()).data.find((m) => m.id === "sim-1");
    expect(await openai.models.retrieve("sim-1")).toEqual(listed);
  });

  it("answers 404 model_not_found in the OpenAI error shape for an unknown id", async () => {
    const r = await refusal(client("team").models.retrieve("no-such-model"));
    expect(r).toMatchObject({ status: 404, code: "model_not_found" });
    const raw = await call(front.url, "GET", "/v1/models/no-such-model");
    expect(raw.body).toEqual({ error: { message: expect.stringContaining("no-such-model"), type: "invalid_request_error", code: "model_not_found", param: null } });
    expect((await call(front.url, "GET", "/v1/models/%E0%A4%80x")).body.error.code).toBe("model_not_found");
    // Read by the front's framing checks even after an event stream (the completions streams above) on a kept-alive connection.
    expect((await call(front.url, "GET", "/v1/models/%E0%A4%A")).body.code).toBe("bad-request-framing");
  });
});

describe("the completions thread", () => {
  it("is a normal thread: listed, and readable with tail and follow", async () => {
    const list = await call(front.url, "GET", "/threads?type=completions&workspace=team");
    expect(list.body.threads).toHaveLength(1);
    const id = list.body.threads[0].id;
    const res = await fetch(`${front.url}/threads/${id}/follow?after=0`);
    const reader = res.body!.getReader();
    let text = "";
    while (!/^id: 1\n.*?\n\n/ms.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toMatch(/^id: 1\ndata: \{"seq":1,/m);
  });
});

describe("SERVICE_COMPLETIONS_DEFAULT_WORKSPACE", () => {
  const second = useFront({
    dataDir: configuredDataDir("agent-runtime-completions-default-"),
    env: { SERVICE_PROVIDER_UPSTREAM: "simulator", SERVICE_COMPLETIONS_DEFAULT_WORKSPACE: "claude-only" },
  });

  it("charges calls without x-service-workspace to the default workspace", async () => {
    const openai = new OpenAI({ apiKey: "unused", baseURL: `${second().url}/v1`, maxRetries: 0 });
    const r = await openai.chat.completions.create({ model: "claude-sim", messages: [{ role: "user", content: "by default" }] });
    expect(r.choices[0]!.message.content).toBe("echo: by default");
    const list = await call(second().url, "GET", "/threads?type=completions&workspace=claude-only");
    const recorded = (await events(second().url, list.body.threads[0].id)).filter((e) => e.kind === "completion");
    expect(recorded[0]!.body).toMatchObject({ account: "c-claude", outcome: "completed" });
  });
});
