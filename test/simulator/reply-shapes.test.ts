import Anthropic from "@anthropic-ai/sdk";
import { streamSimple, Type, type Api, type AssistantMessage, type Context, type Model, type ToolCall } from "@mariozechner/pi-ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { offered, PI_APIS, piModel, piUser, type PiApi } from "./support.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const tools = [
  { name: "read_file", description: "Read a file", parameters: Type.Object({ path: Type.String() }) },
  { name: "grep", description: "Search", parameters: Type.Object({ pattern: Type.String() }) },
];

/** pi-ai over the official SDKs, with reasoning asked for when the model reasons. */
async function pi(model: Model<Api>, context: Context): Promise<AssistantMessage> {
  return streamSimple(model, context, { apiKey: "x", maxRetries: 0, ...(model.reasoning ? { reasoning: "low" as const } : {}) }).result();
}

function reasoning(api: PiApi): Model<Api> {
  return { ...piModel(api, sim.url), reasoning: true };
}

const calls = (m: AssistantMessage) => m.content.filter((c): c is ToolCall => c.type === "toolCall");
const text = (m: AssistantMessage) => m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");

function results(m: AssistantMessage, output: (c: ToolCall) => string): Context["messages"] {
  return calls(m).map((c) => ({ role: "toolResult", toolCallId: c.id, toolName: c.name, content: [{ type: "text", text: output(c) }], isError: false, timestamp: Date.now() }));
}

describe("replies real models send, read by pi-ai on each protocol", () => {
  it.each(PI_APIS)("%s: text and a tool call in one message", async (api) => {
    const m = await pi(piModel(api, sim.url), { messages: [piUser('@sim {"say":"Let me look.","tool":{"name":"read_file","input":{"path":"a"}}}')], tools });
    expect(m.stopReason).toBe("toolUse");
    expect(m.content.map((c) => c.type)).toEqual(["text", "toolCall"]);
    expect(text(m)).toBe("Let me look.");
    expect(calls(m)[0]).toMatchObject({ name: "read_file", arguments: { path: "a" } });
  });

  it.each(PI_APIS)("%s: parallel tool calls, answered once every call has its result", async (api) => {
    const user = piUser('@sim {"tools":[{"name":"read_file","input":{"path":"a"}},{"name":"grep","input":{"pattern":"b"}}],"reply":"both done"}');
    const first = await pi(piModel(api, sim.url), { messages: [user], tools });
    expect(calls(first).map((c) => [c.name, c.arguments])).toEqual([
      ["read_file", { path: "a" }],
      ["grep", { pattern: "b" }],
    ]);
    expect(new Set(calls(first).map((c) => c.id)).size).toBe(2);
    const second = await pi(piModel(api, sim.url), { messages: [user, first, ...results(first, (c) => `${c.name} ok`)], tools });
    expect(text(second)).toBe("both done");
  });

  it.each(["openai-completions", "anthropic-messages"] as const)("%s: a length stop", async (api) => {
    const m = await pi(piModel(api, sim.url), { messages: [piUser('@sim {"reply":"cut he","stop":"length"}')] });
    expect(m.stopReason).toBe("length");
    expect(text(m)).toBe("cut he");
  });

  // The real Responses API ends a cut answer with `response.incomplete`; pi-ai 0.73.1 reads
  // only `response.completed`, so it reports the cut answer as whole and loses its usage.
  // When this fails, pi-ai reads the event and docs/simulator.md's note can go.
  it("openai-responses: pi-ai 0.73.1 misses response.incomplete (a known gap, not the simulator's)", async () => {
    const m = await pi(piModel("openai-responses", sim.url), { messages: [piUser('@sim {"reply":"cut he","stop":"length"}')] });
    expect(m.stopReason).toBe("stop");
    expect(m.usage.output).toBe(0);
  });

  it.each(PI_APIS)("%s: reasoning comes first and is never the reply text", async (api) => {
    const m = await pi(reasoning(api), { messages: [piUser('@sim {"reasoning":"weigh it","reply":"the answer"}')] });
    expect(m.content.map((c) => c.type)).toEqual(["thinking", "text"]);
    expect(m.content[0]).toMatchObject({ type: "thinking", thinking: "weigh it" });
    expect(text(m)).toBe("the answer");
  });

  it.each(PI_APIS)("%s: reasoning before a tool call goes back with the call, as the next call needs", async (api) => {
    const user = piUser('@sim {"reasoning":"need the file","tool":{"name":"read_file","input":{"path":"a"}},"reply":"read it"}');
    const first = await pi(reasoning(api), { messages: [user], tools });
    expect(first.content.map((c) => c.type)).toEqual(["thinking", "toolCall"]);
    const second = await pi(reasoning(api), { messages: [user, first, ...results(first, () => "body")], tools });
    expect(second.stopReason).toBe("stop");
    expect(text(second)).toBe("read it");
  });
});

describe("the shapes on the wire, read by the official SDKs", () => {
  it("Responses: the reasoning item is output_index 0, with encrypted content when asked", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const stream = await client.responses.create({
      model: "sim-1",
      input: '@sim {"reasoning":"think","say":"calling","tool":{"name":"grep","input":{"pattern":"x"}}}',
      tools: offered<OpenAI.Responses.FunctionTool>("openai-responses", ["grep"]),
      include: ["reasoning.encrypted_content"],
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => [e.output_index, e.item.type]);
    expect(added).toEqual([
      [0, "reasoning"],
      [1, "message"],
      [2, "function_call"],
    ]);
    expect(events.some((e) => e.type === "response.reasoning_summary_text.delta")).toBe(true);
    const done = events.at(-1);
    if (done?.type !== "response.completed") throw new Error(`ended with ${done?.type}`);
    expect(done.response.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "think" }], encrypted_content: expect.any(String) });
    expect(done.response.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it("Responses: a length stop is response.incomplete with max_output_tokens", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const res = await client.responses.create({ model: "sim-1", input: '@sim {"reply":"abc","stop":"length"}' });
    expect(res).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  });

  it("Anthropic: thinking with a signature opens the message only when the request enables thinking", async () => {
    const client = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
    const content = '@sim {"reasoning":"hmm","reply":"ok","stop":"length"}';
    const on = await client.messages.create({ model: "claude-sim", max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content }] });
    expect(on.content).toEqual([
      { type: "thinking", thinking: "hmm", signature: expect.any(String) },
      { type: "text", text: "ok" },
    ]);
    expect(on.stop_reason).toBe("max_tokens");
    const off = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content }] });
    expect(off.content).toEqual([{ type: "text", text: "ok" }]);
    const streamed = await client.messages.stream({ model: "claude-sim", max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content }] }).finalMessage();
    expect(streamed.content[0]).toEqual(on.content[0]);
  });

  it("chat completions: reasoning_content deltas, then text and two tool calls, finish_reason tool_calls", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const done = await client.chat.completions
      .stream({
        model: "sim-1",
        messages: [{ role: "user", content: '@sim {"reasoning":"r","say":"two calls","tools":[{"name":"read_file","input":{}},{"name":"grep","input":{"pattern":"p"}}]}' }],
        tools: offered<OpenAI.ChatCompletionTool>("openai-chat", ["read_file", "grep"]),
      })
      .finalChatCompletion();
    const message = done.choices[0]!.message;
    expect(message.content).toBe("two calls");
    expect(message.tool_calls?.map((c) => c.type === "function" && [c.function.name, c.function.arguments])).toEqual([
      ["read_file", "{}"],
      ["grep", '{"pattern":"p"}'],
    ]);
    expect(done.choices[0]!.finish_reason).toBe("tool_calls");
  });
});

describe("what a model binds to itself is refused by another model, as the providers refuse it", () => {
  it("Anthropic: a thinking block signed by one model, sent back to another", async () => {
    const client = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const first = await client.messages.create({ model: "claude-sim", max_tokens: 2048, thinking, messages: [{ role: "user", content: '@sim {"reasoning":"hmm","reply":"ok"}' }] });
    const history: Anthropic.MessageParam[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: first.content as Anthropic.ContentBlockParam[] },
      { role: "user", content: "again" },
    ];
    const same = await client.messages.create({ model: "claude-sim", max_tokens: 2048, thinking, messages: history });
    expect(same.content.at(-1)).toMatchObject({ type: "text" });
    const other = client.messages.create({ model: "claude-sim-8k", max_tokens: 2048, thinking, messages: history });
    await expect(other).rejects.toMatchObject({ status: 400, message: expect.stringContaining("Invalid `signature` in `thinking` block") });
  });

  it("Responses: encrypted reasoning from one model, sent back to another", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const first = await client.responses.create({ model: "sim-1", include: ["reasoning.encrypted_content"], store: false, input: '@sim {"reasoning":"think","reply":"ok"}' });
    const input = [{ role: "user" as const, content: "first" }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: "user" as const, content: "again" }];
    expect((await client.responses.create({ model: "sim-1", store: false, input })).status).toBe("completed");
    await expect(client.responses.create({ model: "sim-2", store: false, input })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("could not be verified") });
  });
});

describe("image input", () => {
  const image = { type: "image_url" as const, image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } };

  it("is read by a model that takes images, and refused to a text-only one as the provider refuses it", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const messages = [{ role: "user" as const, content: [{ type: "text" as const, text: "what is this?" }, image] }];
    expect((await client.chat.completions.create({ model: "sim-1", messages })).choices[0]!.message.content).toBe("echo: what is this?");
    await expect(client.chat.completions.create({ model: "sim-2", messages })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("Image input is not supported") });
    const anthropic = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
    const content = [{ type: "text" as const, text: "and this?" }, { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" } }];
    expect((await anthropic.messages.create({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content }] })).content).toEqual([{ type: "text", text: "echo: and this?" }]);
  });
});
