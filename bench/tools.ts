/**
 * The runtime tools' rows of `npm run bench`: what a model's call of one of the runtime's
 * tools costs against a call of a shell command in the same kind of turn, on pi (in
 * process) and engine_a (over MCP), and the MCP server's own cost against a plain loopback
 * HTTP call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Front } from "../test/support/front.js";
import { startToolServer } from "../local-front/bindings/engines/tools/tool-server.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const sim = (directive: Record<string, unknown>) => `@sim ${JSON.stringify(directive)}\ngo`;

/** Turns whose model calls `subscribe`, against turns whose model runs `true`, interleaved. */
async function turnWithTool(front: Front, row: Row, fmt: Fmt, engine: string, spec: Record<string, unknown>, n: number): Promise<void> {
  const watched = (await front.client.spawn({ model: "sim-1" })).threadId;
  const id = (await front.client.spawn({ ...spec, permissions: "allow" })).threadId;
  const tool: number[] = [];
  const shell: number[] = [];
  for (let i = 0; i < n + 1; i++) {
    const t = performance.now();
    const a = await front.client.send(id, { text: sim({ tool: { name: "subscribe", input: { watch: { thread: watched }, note: `n${i}` } }, reply: "ok" }) });
    const tt = performance.now() - t;
    const s = performance.now();
    const b = await front.client.send(id, { text: sim({ tool: { name: "shell", input: { command: "true" } }, reply: "ok" }) });
    const st = performance.now() - s;
    if (a.outcome !== "completed" || b.outcome !== "completed") throw new Error(`bench: a ${engine} tool turn did not complete: ${JSON.stringify([a, b])}`);
    // The first pair warms the engine up.
    if (i > 0) (tool.push(tt), shell.push(st));
  }
  row(
    `a turn on ${engine} whose model calls the runtime's subscribe tool (${n})`,
    `p50 ${fmt(percentile(tool, 50), 1)} ms, p95 ${fmt(percentile(tool, 95), 1)} ms`,
    `the same turn calling a shell command (true): p50 ${fmt(percentile(shell, 50), 1)} ms`,
    fmt(percentile(tool, 50) / percentile(shell, 50), 2),
    "",
  );
}

/** The MCP server's own cost: a tools/call with the official client, its worker answering at once, against a plain loopback POST. */
async function mcpServer(row: Row, fmt: Fmt): Promise<void> {
  const tools = await startToolServer(async () => Response.json({ text: "ok" }));
  const plain = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ text: "ok" }));
    });
  });
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
  const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/`;
  const token = tools.grant({ thread: "thr_bench", turn: "turn_bench", tools: ["delegate", "subscribe"], handoffTo: [] });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(tools.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  const n = 500;
  const calls: number[] = [];
  const posts: number[] = [];
  try {
    for (let i = 0; i < n + 50; i++) {
      const t = performance.now();
      const r = await client.callTool({ name: "subscribe", arguments: { watch: { thread: "thr_other" } } });
      const ct = performance.now() - t;
      if (r.isError) throw new Error(`bench: the tool call failed: ${JSON.stringify(r)}`);
      const p = performance.now();
      await (await fetch(plainUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ thread: "thr_bench", tool: "subscribe" }) })).json();
      const pt = performance.now() - p;
      if (i >= 50) (calls.push(ct), posts.push(pt));
    }
  } finally {
    await client.close();
    await tools.close();
    plain.close();
  }
  row(
    `an MCP tools/call through the runtime's tool server, official client, its worker answering at once (${n})`,
    `p50 ${fmt(percentile(calls, 50), 2)} ms, p95 ${fmt(percentile(calls, 95), 2)} ms`,
    `a plain loopback JSON POST: p50 ${fmt(percentile(posts, 50), 2)} ms`,
    fmt(percentile(calls, 50) / percentile(posts, 50), 2),
    "",
  );
}

export async function toolRows(front: Front, row: Row, fmt: Fmt): Promise<void> {
  await mcpServer(row, fmt);
  await turnWithTool(front, row, fmt, "pi", { model: "sim-1" }, 30);
  await turnWithTool(front, row, fmt, "engine_a", { model: "claude-sim" }, 10);
}
