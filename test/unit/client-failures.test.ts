import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeClient, RuntimeError } from "../../client/index.js";

/** A server that answers each path with a fixed status and body, as a broken or foreign runtime might. */
const ANSWERS: Record<string, [number, string]> = {
  "/spawn": [201, JSON.stringify({ thread: "thr_x" })],
  "/threads/thr_a/messages": [202, "<html>proxy error</html>"],
  "/threads/thr_a/tail": [200, JSON.stringify({ events: [{ seq: "one", ts: "t", kind: "message", body: {} }], nextAfter: "1", hasMore: false })],
  "/threads/thr_a/turn": [200, "[]"],
  "/threads/thr_b": [404, JSON.stringify({ error: "no such thread", code: "thread-not-found" })],
  "/threads/thr_c/send": [200, JSON.stringify({ seq: 2, ts: "t", turnId: "turn_1", outcome: "done", failure: null, reply: null })],
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const [status, body] = ANSWERS[new URL(req.url!, "http://x").pathname] ?? [500, "{}"];
    req.resume();
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function failure(p: Promise<unknown>): Promise<RuntimeError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(RuntimeError);
  return err as RuntimeError;
}

describe("the client library's three failure kinds (SPEC Errors)", () => {
  const client = () => new RuntimeClient({ baseUrl: base });

  it("decode: valid JSON of the wrong shape", async () => {
    expect(await failure(client().spawn())).toMatchObject({ kind: "decode", message: expect.stringContaining("threadId") });
    expect(await failure(client().tail("thr_a", { after: 0 }))).toMatchObject({ kind: "decode", message: expect.stringContaining("events.0.seq") });
    expect(await failure(client().send("thr_c", { text: "x" }))).toMatchObject({ kind: "decode", message: expect.stringContaining("outcome") });
    expect(await failure(client().turn("thr_a"))).toMatchObject({ kind: "decode", message: expect.stringContaining("not a JSON object") });
  });

  it("decode: an answer that is not JSON", async () => {
    expect(await failure(client().post("thr_a", { text: "x" }))).toMatchObject({ kind: "decode", status: 202 });
  });

  it("rejected: a refusal, with its status and code", async () => {
    expect(await failure(client().thread("thr_b"))).toMatchObject({ kind: "rejected", status: 404, code: "thread-not-found" });
  });

  it("transport: no usable response at all", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await failure(new RuntimeClient({ baseUrl: `http://127.0.0.1:${port}` }).spawn())).toMatchObject({ kind: "transport" });
  });
});
