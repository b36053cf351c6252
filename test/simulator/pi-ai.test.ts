import { Type, type AssistantMessage, type Context, type ToolCall } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { PI_APIS, piModel, piUser, runPi } from "./support.js";

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
beforeEach(async () => {
  await fetch(`${sim.url}/_sim/requests`, { method: "DELETE" });
});

const tools = [
  { name: "read_file", description: "Read a file", parameters: Type.Object({ path: Type.String() }) },
  { name: "ask_user", description: "Ask the user", parameters: Type.Object({ question: Type.String() }) },
];

function toolCallOf(message: AssistantMessage): ToolCall {
  const call = message.content.find((c) => c.type === "toolCall");
  if (!call) throw new Error(`no tool call in ${JSON.stringify(message)}`);
  return call;
}

function textOf(message: AssistantMessage): string {
  return message.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
}

function toolResult(call: ToolCall, text: string): Context["messages"][number] {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError: false, timestamp: Date.now() };
}

/** What pi-ai reports as errorMessage: the SDK's APIError message, i.e. "<status> <detail>". */
const PI_ERRORS: Record<string, { openai: RegExp; anthropic: RegExp }> = {
  quota: { openai: /^429 You exceeded your current quota/, anthropic: /^400 \{"type":"error","error":\{"type":"invalid_request_error","message":"Your credit balance is too low/ },
  auth: { openai: /^401 Incorrect API key provided/, anthropic: /^401 \{"type":"error","error":\{"type":"authentication_error"/ },
  "model-not-found": { openai: /^404 The model `sim-1` does not exist or you do not have access to it\.$/, anthropic: /^404 .*"not_found_error","message":"model: sim-1"/ },
  "unsupported-model": { openai: /^400 The model `sim-1` is not supported for this account\.$/, anthropic: /^403 .*"permission_error"/ },
  "rate-limit": { openai: /^429 Rate limit reached for sim-1/, anthropic: /^429 .*"rate_limit_error"/ },
  server: { openai: /^500 The server had an error/, anthropic: /^500 .*"api_error","message":"Internal server error"/ },
};

describe.each(PI_APIS)("pi-ai streamSimple over %s", (api) => {
  const model = () => piModel(api, sim.url);

  it("streams the echo in several text deltas with usage and cost", async () => {
    const { events, message } = await runPi(model(), { systemPrompt: "be brief", messages: [piUser("hello there")] });
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.delta : ""))).toEqual(["echo: ", "hello ", "there"]);
    expect(events.at(-1)!.type).toBe("done");
    expect(message.stopReason).toBe("stop");
    expect(textOf(message)).toBe("echo: hello there");
    expect(message.usage).toMatchObject({ input: 5, output: 5, totalTokens: 10 });
    expect(message.usage.cost.total).toBeGreaterThan(0);
  });

  it("runs a full tool round trip and sends the whole conversation back", async () => {
    const context: Context = { tools, messages: [piUser('read a.txt\n@sim {"tool":{"name":"read_file","input":{"path":"a.txt"}}}')] };
    const first = await runPi(model(), context);
    expect(first.message.stopReason).toBe("toolUse");
    const call = toolCallOf(first.message);
    expect(call).toMatchObject({ name: "read_file", arguments: { path: "a.txt" } });
    expect(first.events.some((e) => e.type === "toolcall_delta")).toBe(true);

    context.messages.push(first.message, toolResult(call, "the contents"));
    const second = await runPi(model(), context);
    expect(second.message.stopReason).toBe("stop");
    expect(textOf(second.message)).toBe("tool read_file returned: the contents");

    const { requests } = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { requests: { body: Record<string, unknown[]> }[] };
    expect(requests).toHaveLength(2);
    const sent = requests[1]!.body;
    const conversation = api === "openai-responses" ? sent.input! : sent.messages!;
    expect(JSON.stringify(conversation)).toContain("the contents");
    expect(conversation).toHaveLength(3);
  });

  it("asks the user, then answers with the answer", async () => {
    const context: Context = { tools, messages: [piUser('@sim {"ask":"Which file?"}')] };
    const first = await runPi(model(), context);
    const call = toolCallOf(first.message);
    expect(call).toMatchObject({ name: "ask_user", arguments: { question: "Which file?" } });
    context.messages.push(first.message, toolResult(call, "b.txt"));
    const second = await runPi(model(), context);
    expect(textOf(second.message)).toBe("you answered: b.txt");
  });

  it.each(Object.keys(PI_ERRORS))("reports fail %s as stopReason error with the status-prefixed text", async (fail) => {
    const { events, message } = await runPi(model(), { messages: [piUser(`@sim {"fail":"${fail}"}`)] });
    expect(events.map((e) => e.type)).toEqual(["error"]);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(PI_ERRORS[fail]![api === "anthropic-messages" ? "anthropic" : "openai"]);
  });

  it("reports a mid-stream disconnect as stopReason error 'terminated', keeping the partial text", async () => {
    const { events, message } = await runPi(model(), { messages: [piUser('@sim {"fail":"disconnect","reply":"abcdef"}')] });
    expect(events.map((e) => e.type)).toEqual(["start", "text_start", "text_delta", "error"]);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("terminated");
    expect(textOf(message)).toBe("ab");
  });

  it("reports a bad directive as a 400 naming the problem", async () => {
    const { message } = await runPi(model(), { messages: [piUser('@sim {"chunks":"three"}')] });
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/^400 .*@sim directive: \\?"chunks\\?" must be an integer >= 1/);
  });
});
