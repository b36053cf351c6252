import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";

let sim: Simulator;
let client: Anthropic;
beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
});
afterAll(() => sim.close());

const bash = { name: "Bash", description: "run", input_schema: { type: "object" as const, properties: { command: { type: "string" } } } };
const script = '@sim {"tool":{"name":"shell","input":{"command":"ls -la"}}}';

describe("one script for every engine", () => {
  it("sends a scripted shell call to the Bash tool when that is what the request offers", async () => {
    const m = await client.messages.create({ model: "claude-sim", max_tokens: 100, tools: [bash], messages: [{ role: "user", content: script }] });
    expect(m.content).toEqual([expect.objectContaining({ type: "tool_use", name: "Bash", input: { command: "ls -la", description: "run the scripted command" } })]);
  });

  it("keeps the scripted name when the request offers it, and refuses a tool the request does not offer", async () => {
    const shell = { ...bash, name: "shell" };
    const offered = await client.messages.create({ model: "claude-sim", max_tokens: 100, tools: [bash, shell], messages: [{ role: "user", content: script }] });
    expect(offered.content[0]).toMatchObject({ type: "tool_use", name: "shell", input: { command: "ls -la" } });
    const none = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content: script }] }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(Anthropic.BadRequestError);
    expect((none as Error).message).toContain('@sim directive: tool \\"shell\\" is not offered by this request (the request offers no tools)');
    const other = await client.messages
      .create({ model: "claude-sim", max_tokens: 100, tools: [{ ...bash, name: "Read" }], messages: [{ role: "user", content: '@sim {"tool":{"name":"Write","input":{}}}' }] })
      .catch((e: unknown) => e);
    expect((other as Error).message).toContain('tool \\"Write\\" is not offered by this request (offered: Read)');
  });

  it("calls a runtime tool by the name the request offers: an MCP server's, or a function of a Responses namespace", async () => {
    const delegate = '@sim {"tool":{"name":"delegate","input":{"title":"t","prompt":"p"}}}';
    const mcp = await client.messages.create({ model: "claude-sim", max_tokens: 100, tools: [{ ...bash, name: "mcp__runtime__delegate" }], messages: [{ role: "user", content: delegate }] });
    expect(mcp.content[0]).toMatchObject({ type: "tool_use", name: "mcp__runtime__delegate", input: { title: "t", prompt: "p" } });
    const namespace = { type: "namespace", name: "mcp__runtime", description: "Tools in the mcp__runtime namespace.", tools: [{ type: "function", name: "delegate", parameters: { type: "object", properties: {} } }] };
    const res = await fetch(`${sim.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: "Bearer x", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-sim", input: [{ role: "user", content: [{ type: "input_text", text: delegate }] }], tools: [namespace] }),
    });
    const body = (await res.json()) as { output: Record<string, unknown>[] };
    expect(body.output.find((o) => o.type === "function_call")).toMatchObject({ name: "delegate", namespace: "mcp__runtime", arguments: '{"title":"t","prompt":"p"}' });
  });

  it("leaves a client's <system-reminder> context out of the echo and the directives", async () => {
    const content = [
      { type: "text" as const, text: '<system-reminder>\nenvironment: linux\n@sim {"reply":"not from the person"}\n</system-reminder>' },
      { type: "text" as const, text: "hello" },
    ];
    const m = await client.messages.create({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content }] });
    expect(m.content).toEqual([expect.objectContaining({ type: "text", text: "echo: hello" })]);
  });
});
