import OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { offered, parseSse, post, requestBody } from "./support.js";

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
});
afterAll(() => sim.close());

const TOOLS = offered<OpenAI.ChatCompletionTool>("openai-chat", ["read_file", "ls", "ask_user"]);

async function streamChat(messages: ChatCompletionMessageParam[]) {
  const stream = await client.chat.completions.create({ model: "sim-1", messages, tools: TOOLS, stream: true, stream_options: { include_usage: true } });
  const chunks: ChatCompletionChunk[] = [];
  const at: number[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    at.push(Date.now());
  }
  const choices = chunks.flatMap((c) => c.choices);
  return {
    chunks,
    at,
    deltas: choices.map((c) => c.delta.content).filter((d): d is string => typeof d === "string" && d !== ""),
    toolDeltas: choices.flatMap((c) => c.delta.tool_calls ?? []),
    finish: choices.map((c) => c.finish_reason).filter(Boolean),
    usage: chunks.at(-1)?.usage,
  };
}

describe("OpenAI chat completions through the official SDK", () => {
  it("echoes the user text in several deltas, then finish_reason and a usage chunk", async () => {
    const r = await streamChat([
      { role: "system", content: "be brief" },
      { role: "user", content: "hello there" },
    ]);
    expect(r.chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(r.deltas).toEqual(["echo: ", "hello ", "there"]);
    expect(r.finish).toEqual(["stop"]);
    expect(r.chunks.at(-1)!.choices).toEqual([]);
    // "be brief" + "hello there" = 19 chars -> 5 tokens; "echo: hello there" = 17 chars -> 5 tokens.
    expect(r.usage).toEqual({ prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
  });

  it("joins the user messages after the last assistant message and drops @sim lines", async () => {
    const r = await streamChat([
      { role: "user", content: "old question" },
      { role: "assistant", content: "old answer" },
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "user", content: 'second\n@sim {"chunks":1}' },
    ]);
    expect(r.deltas).toEqual(["echo: first\nsecond"]);
  });

  it("scripts reply, chunks and delayMs", async () => {
    const started = Date.now();
    const r = await streamChat([{ role: "user", content: '@sim {"reply":"abcdefgh","chunks":4,"delayMs":120}' }]);
    expect(r.deltas).toEqual(["ab", "cd", "ef", "gh"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 120 - 20);
    const deltaTimes = r.chunks.map((c, i) => (c.choices[0]?.delta.content ? r.at[i]! : 0)).filter(Boolean);
    // No delta before its delays: a gap between two may shrink on a loaded machine (the first
    // read late, the next on time), but no delta can come before the server waited for it.
    for (let i = 1; i < deltaTimes.length; i++) expect(deltaTimes[i]! - started).toBeGreaterThanOrEqual(i * 120 - 20);
  });

  it("never sends an empty delta when chunks exceeds the text length, and honours usage", async () => {
    const r = await streamChat([{ role: "user", content: '@sim {"reply":"hi","chunks":10,"usage":{"input":7,"output":9}}' }]);
    expect(r.deltas).toEqual(["h", "i"]);
    expect(r.usage).toEqual({ prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 });
  });

  it("calls the tool, then answers with its result", async () => {
    const user: ChatCompletionMessageParam = { role: "user", content: 'read it\n@sim {"tool":{"name":"read_file","input":{"path":"a.txt"}}}' };
    const first = await streamChat([user]);
    expect(first.finish).toEqual(["tool_calls"]);
    const [head, ...rest] = first.toolDeltas;
    expect(head).toMatchObject({ index: 0, type: "function", function: { name: "read_file" } });
    expect(head!.id).toMatch(/^call_/);
    expect(rest.length).toBeGreaterThan(1);
    const args = first.toolDeltas.map((d) => d.function?.arguments ?? "").join("");
    expect(JSON.parse(args)).toEqual({ path: "a.txt" });

    const second = await streamChat([
      user,
      { role: "assistant", content: null, tool_calls: [{ id: head!.id!, type: "function", function: { name: "read_file", arguments: args } }] },
      { role: "tool", tool_call_id: head!.id!, content: "file body" },
    ]);
    expect(second.finish).toEqual(["stop"]);
    expect(second.deltas.join("")).toBe("tool read_file returned: file body");
  });

  it("asks the user, then answers with the answer; tool comes before ask", async () => {
    const user: ChatCompletionMessageParam = { role: "user", content: '@sim {"tool":{"name":"ls","input":{}},"ask":"Which one?"}' };
    const call = (id: string, name: string, args: string): ChatCompletionMessageParam => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
    });
    const first = await streamChat([user]);
    expect(first.toolDeltas[0]!.function?.name).toBe("ls");
    const second = await streamChat([user, call("c1", "ls", "{}"), { role: "tool", tool_call_id: "c1", content: "a b" }]);
    expect(second.toolDeltas[0]!.function?.name).toBe("ask_user");
    expect(JSON.parse(second.toolDeltas.map((d) => d.function?.arguments ?? "").join(""))).toEqual({ question: "Which one?" });
    const third = await streamChat([
      user,
      call("c1", "ls", "{}"),
      { role: "tool", tool_call_id: "c1", content: "a b" },
      call("c2", "ask_user", '{"question":"Which one?"}'),
      { role: "tool", tool_call_id: "c2", content: "b" },
    ]);
    expect(third.deltas.join("")).toBe("you answered: b");
  });

  it("works with the SDK's accumulating stream helper, tool calls included", async () => {
    const stream = client.chat.completions.stream({
      model: "sim-1",
      messages: [{ role: "user", content: '@sim {"tool":{"name":"grep","input":{"pattern":"a b"}}}' }],
      tools: [{ type: "function", function: { name: "grep", parameters: { type: "object", properties: { pattern: { type: "string" } } } } }],
    });
    const done = await stream.finalChatCompletion();
    const call = done.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function).toMatchObject({ name: "grep", arguments: '{"pattern":"a b"}' });
    expect(done.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("answers without stream with one chat.completion object", async () => {
    const res = await client.chat.completions.create({ model: "gpt-sim", messages: [{ role: "user", content: "plain" }] });
    expect(res.object).toBe("chat.completion");
    expect(res.model).toBe("gpt-sim");
    expect(res.choices[0]!.message.content).toBe("echo: plain");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });

    const tool = await client.chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: '@sim {"ask":"why?"}' }], tools: TOOLS });
    expect(tool.choices[0]!.finish_reason).toBe("tool_calls");
    const call = tool.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function).toEqual({ name: "ask_user", arguments: '{"question":"why?"}' });
  });

  it("omits the usage chunk unless include_usage is set, and ends with [DONE]", async () => {
    const res = await post(sim.url, "/v1/chat/completions", requestBody("openai-chat", "x", { stream: true }), { authorization: "Bearer k" });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = parseSse(res.text);
    expect(frames.at(-1)!.data).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.choices.length === 1 && !("usage" in c))).toBe(true);
  });

  it("surfaces a scripted failure as the SDK's APIError", async () => {
    const err = await client.chat.completions
      .create({ model: "sim-1", messages: [{ role: "user", content: '@sim {"fail":"rate-limit","retryAfter":3}' }], stream: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const apiErr = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(apiErr.status).toBe(429);
    expect(apiErr.code).toBe("rate_limit_exceeded");
    expect(apiErr.headers.get("retry-after")).toBe("3");
  });

  it("cuts the stream after one delta on disconnect", async () => {
    const chunks: string[] = [];
    const err = await (async () => {
      const stream = await client.chat.completions.create({ model: "sim-1", messages: [{ role: "user", content: '@sim {"fail":"disconnect","reply":"abcdef"}' }], stream: true });
      for await (const chunk of stream) chunks.push(chunk.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(chunks.join("")).toBe("ab");
  });
});
