import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { offered, parseSse, post, requestBody } from "./support.js";

const TOOLS = offered<Anthropic.Tool>("anthropic-messages", ["Bash", "ask_user"]);

let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator();
  // The SDK appends /v1/messages itself, so its baseURL is the bare origin.
  client = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
});
afterAll(() => sim.close());

async function streamRaw(messages: MessageParam[]) {
  const stream = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages, tools: TOOLS, stream: true });
  const events: RawMessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("Anthropic Messages through the official SDK", () => {
  it("streams the echo with the real event sequence", async () => {
    const stream = client.messages.stream({ model: "claude-sim", max_tokens: 100, system: "be brief", messages: [{ role: "user", content: "hello there" }] });
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const message = await stream.finalMessage();
    expect(texts).toEqual(["echo: ", "hello ", "there"]);
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-sim",
      content: [{ type: "text", text: "echo: hello there" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 5 },
    });
    expect(message.id).toMatch(/^msg_/);

    // The SDK swallows `ping`, so the wire order is checked on the raw frames.
    const res = await post(sim.url, "/v1/messages", requestBody("anthropic-messages", "hi", { stream: true }), { "x-api-key": "k", "anthropic-version": "2023-06-01" });
    const frames = parseSse(res.text);
    expect(frames.map((f) => f.event)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    for (const frame of frames) expect(JSON.parse(frame.data).type).toBe(frame.event);
    expect(JSON.parse(frames[0]!.data)).toMatchObject({ message: { content: [], stop_reason: null, stop_sequence: null, usage: { output_tokens: 0 } } });
    expect(JSON.parse(frames[7]!.data)).toMatchObject({ delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } });
  });

  it("calls the tool with input_json_delta, then answers from the tool_result", async () => {
    const user: MessageParam = { role: "user", content: [{ type: "text", text: 'do it\n@sim {"tool":{"name":"Bash","input":{"command":"echo hi"}}}' }] };
    const first = await client.messages.stream({ model: "claude-sim", max_tokens: 100, messages: [user], tools: TOOLS }).finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content[0]!;
    if (use.type !== "tool_use") throw new Error("expected tool_use");
    expect(use.id).toMatch(/^toolu_/);
    expect(use).toMatchObject({ name: "Bash", input: { command: "echo hi" } });

    const events = await streamRaw([user]);
    expect(events[1]).toMatchObject({ type: "content_block_start", content_block: { type: "tool_use", name: "Bash", input: {} } });
    expect(events.filter((e) => e.type === "content_block_delta").every((e) => e.delta.type === "input_json_delta")).toBe(true);

    const second = await client.messages
      .stream({
        model: "claude-sim",
        max_tokens: 100,
        tools: TOOLS,
        messages: [
          user,
          { role: "assistant", content: [use] },
          // Claude Code sends text next to tool results; it must not count as a new user turn.
          { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "hi" }] }, { type: "text", text: "<reminder/>" }] },
        ],
      })
      .finalMessage();
    expect(second.content).toEqual([{ type: "text", text: "tool Bash returned: hi" }]);
    expect(second.stop_reason).toBe("end_turn");
  });

  it("asks, then answers with the user's answer", async () => {
    const user: MessageParam = { role: "user", content: '@sim {"ask":"Which file?"}' };
    const first = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages: [user], tools: TOOLS });
    const use = first.content[0]!;
    expect(use).toMatchObject({ type: "tool_use", name: "ask_user", input: { question: "Which file?" } });
    const second = await client.messages.create({
      model: "claude-sim",
      max_tokens: 100,
      tools: TOOLS,
      messages: [user, { role: "assistant", content: [use] }, { role: "user", content: [{ type: "tool_result", tool_use_id: (use as { id: string }).id, content: "b.txt" }] }],
    });
    expect(second.content).toEqual([{ type: "text", text: "you answered: b.txt" }]);
  });

  it("answers without stream with one message", async () => {
    const message = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content: '@sim {"reply":"ok","usage":{"input":11,"output":22}}' }] });
    expect(message).toMatchObject({ content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage: { input_tokens: 11, output_tokens: 22 } });
  });

  it("ignores the ?beta=true query and accepts a bearer token", async () => {
    const res = await post(sim.url, "/v1/messages?beta=true", requestBody("anthropic-messages", "x", { stream: true }), { authorization: "Bearer tok", "anthropic-version": "2023-06-01" });
    expect(res.status).toBe(200);
    expect(parseSse(res.text).at(-1)!.event).toBe("message_stop");
  });

  it("surfaces a scripted failure as the SDK's APIError", async () => {
    const err = await client.messages.create({ model: "claude-sim", max_tokens: 10, messages: [{ role: "user", content: '@sim {"fail":"quota"}' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const apiErr = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(apiErr.status).toBe(400);
    expect(apiErr.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(apiErr.message).toMatch(/^400 .*credit balance is too low/);
  });

  it("cuts the stream after one delta on disconnect", async () => {
    const stream = client.messages.stream({ model: "claude-sim", max_tokens: 10, messages: [{ role: "user", content: '@sim {"fail":"disconnect","reply":"abcdef"}' }] });
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(texts).toEqual(["ab"]);
  });
});
