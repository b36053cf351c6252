import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { post } from "./support.js";

/**
 * The simulator standing in for both providers: here 127.0.0.1 is OpenAI's host and
 * localhost Anthropic's, as api.openai.com and api.anthropic.com are behind the proxy.
 */
let sim: Simulator;
let port: number;
beforeAll(async () => {
  sim = await startSimulator({
    credentials: {
      apiKeys: { "sk-openai": { provider: "openai", org: "org-o" }, "sk-ant": { provider: "anthropic", org: "org-a" } },
      refreshTokens: { "rt-first": { provider: "anthropic", accountId: "acct-1" } },
      hosts: { "127.0.0.1": "openai", localhost: "anthropic" },
    },
  });
  port = sim.port;
});
afterAll(() => sim.close());

const openaiAt = (host: string, apiKey: string) => new OpenAI({ baseURL: `http://${host}:${port}/v1`, apiKey, maxRetries: 0 });
const anthropicAt = (apiKey: string) => new Anthropic({ baseURL: `http://localhost:${port}`, apiKey, maxRetries: 0 });
const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as { status: number; message: string });

describe("each provider answers with its own keys, protocols and models", () => {
  it("OpenAI's host serves chat completions and Responses to its keys, and names the organization", async () => {
    const chat = await openaiAt("127.0.0.1", "sk-openai").chat.completions.create({ model: "gpt-sim", messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(chat.data.choices[0]!.message.content).toBe("echo: hi");
    expect(chat.response.headers.get("openai-organization")).toBe("org-o");
    expect((await openaiAt("127.0.0.1", "sk-openai").responses.create({ model: "sim-1", input: "yo" })).output_text).toBe("echo: yo");
  });

  it("a key sent to the other provider is refused as that provider refuses a stranger's key", async () => {
    expect(await failure(openaiAt("127.0.0.1", "sk-ant").chat.completions.create({ model: "gpt-sim", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 401,
      message: expect.stringContaining("Incorrect API key provided"),
    });
    expect(await failure(anthropicAt("sk-openai").messages.create({ model: "claude-sim", max_tokens: 10, messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 401,
      message: expect.stringContaining("authentication_error"),
    });
  });

  it("a model the endpoint does not serve is not found, in the provider's words", async () => {
    expect(await failure(anthropicAt("sk-ant").messages.create({ model: "gpt-sim", max_tokens: 10, messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 404,
      message: expect.stringContaining('"not_found_error","message":"model: gpt-sim"'),
    });
    expect(await failure(openaiAt("127.0.0.1", "sk-openai").chat.completions.create({ model: "claude-sim", messages: [{ role: "user", content: "x" }] }))).toMatchObject({
      status: 404,
      message: expect.stringContaining("The model `claude-sim` does not exist"),
    });
    // The providers' real models are served, as pi-ai's catalog lists them.
    expect((await anthropicAt("sk-ant").messages.create({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "real" }] })).content).toEqual([{ type: "text", text: "echo: real" }]);
  });

  it("a path the provider does not have is a 404", async () => {
    const openaiMessages = await post(`http://127.0.0.1:${port}`, "/v1/messages", { model: "claude-sim", max_tokens: 5, messages: [] }, { "x-api-key": "sk-openai", "anthropic-version": "2023-06-01" });
    expect(openaiMessages.status).toBe(404);
    const anthropicResponses = await post(`http://localhost:${port}`, "/v1/responses", { model: "claude-sim", input: "x" }, { authorization: "Bearer sk-ant" });
    expect(anthropicResponses.status).toBe(404);
  });

  it("Anthropic's OpenAI-compatible endpoint takes Anthropic keys and answers Anthropic's own errors", async () => {
    const compat = openaiAt("localhost", "sk-ant");
    expect((await compat.chat.completions.create({ model: "claude-sim", messages: [{ role: "user", content: "compat" }] })).choices[0]!.message.content).toBe("echo: compat");
    const refused = await post(`http://localhost:${port}`, "/v1/chat/completions", { model: "gpt-sim", messages: [{ role: "user", content: "x" }] }, { authorization: "Bearer sk-ant" });
    expect([refused.status, refused.json()]).toEqual([404, { type: "error", error: { type: "not_found_error", message: "model: gpt-sim" } }]);
    const stranger = await post(`http://localhost:${port}`, "/v1/chat/completions", { model: "claude-sim", messages: [] }, { authorization: "Bearer sk-openai" });
    expect([stranger.status, stranger.json().error.type]).toEqual([401, "authentication_error"]);
  });
});

describe("OAuth refreshes", () => {
  it("rotate the refresh token: the new one works, the used one is refused from then on", async () => {
    const refresh = (token: string) => post(`http://localhost:${port}`, "/v1/oauth/token", { grant_type: "refresh_token", refresh_token: token });
    const first = await refresh("rt-first");
    expect(first.status).toBe(200);
    const rotated = first.json().refresh_token as string;
    expect(rotated).not.toBe("rt-first");
    expect((await refresh("rt-first")).json()).toMatchObject({ error: "invalid_grant" });
    const second = await refresh(rotated);
    expect(second.status).toBe(200);
    // The access token it issued is Anthropic's: good on Anthropic's host only.
    const token = second.json().access_token as string;
    expect((await anthropicAt(token).messages.create({ model: "claude-sim", max_tokens: 5, messages: [{ role: "user", content: "t" }] })).content).toHaveLength(1);
    // A refresh token is good with the provider that issued it only.
    expect((await post(`http://127.0.0.1:${port}`, "/oauth/token", { grant_type: "refresh_token", refresh_token: second.json().refresh_token })).json()).toMatchObject({ error: "invalid_grant" });
  });
});
