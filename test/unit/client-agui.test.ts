import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyEvents, type BaseEvent } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AguiContinuity, RuntimeClient, RuntimeError, type AguiEvent } from "../../client/index.js";

/** A runtime that answers its AG-UI routes with fixed SSE bodies, as a broken or foreign one might. */
const STREAMS: Record<string, string> = {
  "/threads/thr_bad/agui": `id: 1\ndata: ${JSON.stringify({ type: "RUN_STARTED", threadId: "thr_bad" })}\n\n`,
  "/threads/thr_bad/agui-run": `data: ${JSON.stringify({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "" })}\n\n`,
  "/threads/thr_bad/follow": `id: 1\ndata: ${JSON.stringify({ seq: "one", ts: "t", kind: "message", body: {} })}\n\n`,
  "/threads/thr_cut/agui-run": `data: ${JSON.stringify({ type: "RUN_STARTED", threadId: "thr_cut", runId: "r" })}\n\n`,
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const path = new URL(req.url!, "http://x").pathname + (req.method === "POST" ? "-run" : "");
    const body = STREAMS[path];
    if (body === undefined) return void res.writeHead(404, { "content-type": "application/json" }).end("{}");
    res.writeHead(200, { "content-type": "text/event-stream" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function drain<T>(it: AsyncIterable<T>): Promise<unknown> {
  try {
    for await (const _ of it);
  } catch (e) {
    return e;
  }
  return null;
}

const input = (threadId: string) => ({ threadId, runId: "r", messages: [{ id: "u", role: "user", content: "hi" }] });

describe("the client library's AG-UI streams fail as its other calls do", () => {
  const client = () => new RuntimeClient({ baseUrl: base, pollMs: 50 });

  it("decode: an event of the wrong shape, followed or in a run", async () => {
    const followed = await drain(client().followAgui("thr_bad"));
    expect(followed).toBeInstanceOf(RuntimeError);
    expect(followed).toMatchObject({ kind: "decode", message: expect.stringContaining("runId") });
    const run = await drain(await client().runAgui("thr_bad", input("thr_bad")));
    expect(run).toMatchObject({ kind: "decode", message: expect.stringContaining("delta") });
  });

  it("decode: a followed log event of the wrong shape ends follow, as AG-UI's do, rather than reconnecting for ever", async () => {
    expect(await drain(client().follow("thr_bad"))).toMatchObject({ kind: "decode", message: expect.stringContaining("seq") });
  });

  it("transport: a run's stream that ends before the run does", async () => {
    expect(await drain(await client().runAgui("thr_cut", input("thr_cut")))).toMatchObject({ kind: "transport" });
  });

  it("unsupported: a runtime without the route ends the iteration", async () => {
    const statuses: string[] = [];
    expect(await drain(client().followAgui("thr_none", { onStatus: (s) => statuses.push(s) }))).toBeNull();
    expect(statuses).toEqual(["unsupported"]);
  });
});

describe("AguiContinuity", () => {
  const run = (runId: string): AguiEvent => ({ type: "RUN_STARTED", threadId: "t", runId });
  const text = (delta: string): AguiEvent => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "turn_1.r1", delta });

  it("closes the message a lost connection left open when the run ends without it (its reply was never stored)", async () => {
    const c = new AguiContinuity();
    const passed: AguiEvent[] = [];
    const frame = (e: AguiEvent, id: number | null) => passed.push(...c.pass(e, id));
    c.connected(false);
    frame(run("turn_1"), 5);
    frame({ type: "TEXT_MESSAGE_START", messageId: "turn_1.r1", role: "assistant" }, null);
    frame(text("hal"), null);
    c.connected(true);
    // The runtime resumes after 5: the run again, then the turn's end, with no reply.
    frame(run("turn_1"), null);
    frame({ type: "RUN_FINISHED", threadId: "t", runId: "turn_1", outcome: { type: "cancelled" } }, 7);
    expect(passed.map((e) => e.type)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]);
    await lastValueFrom(from(passed as BaseEvent[]).pipe(verifyEvents(false), toArray()));
  });

  it("passes the rest of a stored reply after the live text it had passed, whatever its pieces", () => {
    const c = new AguiContinuity();
    const passed: AguiEvent[] = [];
    const frame = (e: AguiEvent, id: number | null) => passed.push(...c.pass(e, id));
    frame(run("turn_1"), 5);
    frame({ type: "TEXT_MESSAGE_START", messageId: "turn_1.r1", role: "assistant" }, null);
    frame(text("hal"), null);
    frame(text("f wa"), null);
    c.connected(true);
    frame({ type: "TEXT_MESSAGE_START", messageId: "turn_1.r1", role: "assistant" }, null);
    frame(text("half way there"), null);
    frame({ type: "TEXT_MESSAGE_END", messageId: "turn_1.r1" }, 8);
    expect(passed.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => (e as { delta: string }).delta)).toEqual(["hal", "f wa", "y there"]);
    expect(passed.filter((e) => e.type === "TEXT_MESSAGE_START")).toHaveLength(1);
  });

  it("passes on everything a connection that was never lost sends, repeated or not", () => {
    const c = new AguiContinuity();
    const custom: AguiEvent = { type: "CUSTOM", name: "seat-joined", value: {} };
    expect([...c.pass(custom, null), ...c.pass(custom, 3)]).toEqual([custom, custom]);
  });
});
