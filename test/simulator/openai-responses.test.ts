import OpenAI from "openai";
import type { ResponseInput, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { offered, parseSse, post, requestBody } from "./support.js";

const TOOLS = offered<OpenAI.Responses.FunctionTool>("openai-responses", ["shell", "ask_user"]);

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator();
  client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
});
afterAll(() => sim.close());

async function streamResponse(input: ResponseInput | string, instructions?: string) {
  const stream = await client.responses.create({ model: "sim-1", input, tools: TOOLS, stream: true, ...(instructions ? { instructions } : {}) });
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const completed = events.at(-1);
  if (completed?.type !== "response.completed") throw new Error(`last event was ${completed?.type}`);
  return {
    events,
    types: events.map((e) => e.type),
    deltas: events.flatMap((e) => (e.type === "response.output_text.delta" || e.type === "response.function_call_arguments.delta" ? [e.delta] : [])),
    response: completed.response,
  };
}

describe("OpenAI Responses through the official SDK", () => {
  it("streams the echo with the full event sequence and usage", async () => {
    const r = await streamResponse([{ role: "user", content: [{ type: "input_text", text: "hello there" }] }], "be brief");
    expect(r.types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(r.events.map((e) => e.sequence_number)).toEqual(r.events.map((_, i) => i));
    expect(r.deltas.join("")).toBe("echo: hello there");
    const added = r.events[2]!;
    expect(added.type === "response.output_item.added" && added.item).toMatchObject({ type: "message", status: "in_progress", role: "assistant", content: [] });
    const delta = r.events[4]!;
    expect(delta).toMatchObject({ output_index: 0, content_index: 0, item_id: added.type === "response.output_item.added" ? added.item.id : "" });
    expect(r.response).toMatchObject({
      object: "response",
      status: "completed",
      model: "sim-1",
      output: [{ type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "echo: hello there", annotations: [] }] }],
      usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it("works with the SDK's accumulating stream helper", async () => {
    const stream = client.responses.stream({ model: "sim-1", input: '@sim {"reply":"helper ok"}' });
    const texts: string[] = [];
    stream.on("response.output_text.delta", (e) => texts.push(e.delta));
    const final = await stream.finalResponse();
    expect(texts.join("")).toBe("helper ok");
    expect(final.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "helper ok" }] });
  });

  it("accepts a plain string input", async () => {
    const r = await streamResponse('just text\n@sim {"chunks":1}');
    expect(r.deltas).toEqual(["echo: just text"]);
  });

  it("calls the tool, then answers with its function_call_output", async () => {
    const user = { role: "user" as const, content: 'go\n@sim {"tool":{"name":"shell","input":{"cmd":"ls"}},"chunks":2}' };
    const first = await streamResponse([user]);
    expect(first.types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const item = first.response.output[0]!;
    if (item.type !== "function_call") throw new Error("expected a function call");
    expect(item).toMatchObject({ name: "shell", arguments: '{"cmd":"ls"}', status: "completed" });
    expect(item.id).toMatch(/^fc_/);
    expect(item.call_id).toMatch(/^call_/);
    const added = first.events[2]!;
    expect(added.type === "response.output_item.added" && added.item).toMatchObject({ type: "function_call", arguments: "", status: "in_progress", name: "shell" });

    const second = await streamResponse([
      user,
      { type: "function_call", id: item.id, call_id: item.call_id, name: "shell", arguments: item.arguments },
      { type: "function_call_output", call_id: item.call_id, output: "a.txt b.txt" },
    ]);
    expect(second.deltas.join("")).toBe("tool shell returned: a.txt b.txt");
  });

  it("asks the user and then answers", async () => {
    const user = { role: "user" as const, content: '@sim {"ask":"Sure?","reply":"done"}' };
    const first = await streamResponse([user]);
    expect(first.response.output[0]).toMatchObject({ type: "function_call", name: "ask_user", arguments: '{"question":"Sure?"}' });
    const second = await streamResponse([
      user,
      { type: "function_call", call_id: "c1", name: "ask_user", arguments: '{"question":"Sure?"}' },
      { type: "function_call_output", call_id: "c1", output: "yes" },
    ]);
    expect(second.deltas.join("")).toBe("done");
  });

  it("answers without stream with the response object", async () => {
    const res = await client.responses.create({ model: "sim-1", input: "plain" });
    expect(res).toMatchObject({ object: "response", status: "completed", usage: { input_tokens: 2, output_tokens: 3, total_tokens: 5 } });
    expect(res.output_text).toBe("echo: plain");
  });

  it("writes event lines that match the data type", async () => {
    const res = await post(sim.url, "/v1/responses", requestBody("openai-responses", "x", { stream: true }), { authorization: "Bearer k" });
    for (const frame of parseSse(res.text)) expect(JSON.parse(frame.data).type).toBe(frame.event);
  });

  it("surfaces a scripted failure as the SDK's APIError", async () => {
    const err = await client.responses.create({ model: "missing-model", input: '@sim {"fail":"model-not-found"}', stream: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).toBe("404 The model `missing-model` does not exist or you do not have access to it.");
  });
});
