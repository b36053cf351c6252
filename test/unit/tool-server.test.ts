import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startToolServer, type ToolServer } from "../../local-front/bindings/engines/tools/tool-server.js";
import type { ToolScope } from "../../local-front/bindings/engines/tools/runtime-tools.js";

/** What the worker's `POST /internal/tools` was asked, and what this fake answers: a fetch-shaped stand-in for the worker. */
const asked: unknown[] = [];
let answer: () => Response = () => Response.json({ text: "done" });

let server: ToolServer;
beforeAll(async () => {
  server = await startToolServer(async (body) => {
    asked.push(body);
    return answer();
  });
});
afterAll(() => server.close());

const scope = (over: Partial<ToolScope> = {}): ToolScope => ({ thread: "thr_a", turn: "turn_1", tools: ["delegate", "subscribe"], handoffTo: [], ...over });

async function connect(token: string, url = server.url): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe("the runtime's MCP tool server, with the official client", () => {
  it("lists a turn's tools with their schemas, and runs a call as that turn's", async () => {
    const token = server.grant(scope({ tools: ["delegate", "subscribe", "offer_handoff"], handoffTo: [{ name: "reviewer", role: "reviewer" }] }));
    const client = await connect(token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["delegate", "subscribe", "offer_handoff"]);
    const delegate = tools.find((t) => t.name === "delegate")!;
    expect(delegate.inputSchema).toMatchObject({ type: "object", required: ["title", "prompt"] });
    expect(tools.find((t) => t.name === "offer_handoff")!.description).toContain("reviewer (reviewer)");
    answer = () => Response.json({ text: "Delegated as operation op_1", operation: "op_1" });
    const result = await client.callTool({ name: "delegate", arguments: { title: "t", prompt: "p" } });
    expect(result).toMatchObject({ isError: false, content: [{ type: "text", text: "Delegated as operation op_1" }] });
    expect(asked.at(-1)).toEqual({ thread: "thr_a", turn: "turn_1", tool: "delegate", input: { title: "t", prompt: "p" } });
    await client.close();
  });

  it("gives a refusal to the model as the tool's error, with its code, and checks the input first", async () => {
    const client = await connect(server.grant(scope()));
    answer = () => Response.json({ error: "turn turn_1 is not running", code: "turn-not-running" }, { status: 409 });
    const refused = await client.callTool({ name: "subscribe", arguments: { watch: { thread: "thr_b" } } });
    expect(refused).toMatchObject({ isError: true, content: [{ text: "refused (409 turn-not-running): turn turn_1 is not running" }] });
    const before = asked.length;
    const bad = await client.callTool({ name: "delegate", arguments: { title: "no prompt" } });
    expect(bad.isError).toBe(true);
    expect(asked.length).toBe(before);
    // A tool this turn is not offered does not exist for it.
    expect((await client.callTool({ name: "report_outcome", arguments: { status: "completed" } })).isError).toBe(true);
    expect(asked.length).toBe(before);
    await client.close();
  });

  it("serves nobody without a live turn's token, and no foreign Host", async () => {
    await expect(connect("not-a-token")).rejects.toThrow(/bearer token is needed/);
    const token = server.grant(scope());
    server.revoke(token);
    expect(await post(token)).toMatchObject({ status: 401 });
    const live = server.grant(scope());
    expect(await post(live)).toMatchObject({ status: 200 });
    expect(await post(live, "evil.example")).toMatchObject({ status: 403 });
    expect(await post(live, undefined, "/turns/x/approvals/y")).toMatchObject({ status: 404 });
  });
});

/** A tools/list by hand, with the Host header this test chooses (fetch would not send another). */
function post(token: string, host?: string, path = "/mcp"): Promise<{ status: number }> {
  const url = new URL(server.url);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...(host ? { host } : {}) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
