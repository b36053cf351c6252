import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../../client/index.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, waitFor } from "../support/http.js";

let front: Front;
beforeAll(async () => {
  front = await startFront({ env: { SERVICE_AGENTS_MAX_BODY: "200000", SERVICE_AGENTS_BLOB_THRESHOLD: "2048" } });
});
afterAll(async () => {
  await front.stop();
  removeDir(front.dataDir);
});

const req = (path: string, init?: RequestInit) => fetch(front.url + path, init);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  req(path, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });

describe("threads over HTTP", () => {
  it("spawns, accepts messages with 202 {seq, ts}, and reads them back", async () => {
    const spawned = await post("/spawn", { title: "walkthrough", model: "sim-1" });
    expect(spawned.status).toBe(201);
    const { threadId } = await spawned.json();
    expect(threadId).toMatch(/^thr_/);
    // Held, so no turn starts and the log is exactly what this test wrote (turns.test.ts covers turns).
    const ack = await post(`/threads/${threadId}/messages`, { text: "hello", from: "a-script", hold: true });
    expect(ack.status).toBe(202);
    const { seq, ts } = await ack.json();
    expect(seq).toBe(2);
    expect(new Date(ts).toISOString()).toBe(ts);
    const page = await front.client.tail(threadId, { after: 0 });
    expect(page.events.map((e) => e.kind)).toEqual(["spawn", "message"]);
    expect(page.events[1]).toMatchObject({ seq: 2, ts, body: { text: "hello", from: "a-script", hold: true } });
    const row = await front.client.thread(threadId);
    expect(row).toMatchObject({ id: threadId, title: "walkthrough", engine: "pi", stage: "idle", archived: false, lastSeq: 2 });
    expect(row.cost).toEqual({ usd: 0, inputTokens: 0, outputTokens: 0 });
    const head = await (await req(`/threads/${threadId}/head`)).json();
    expect(head).toMatchObject({ id: threadId, type: "chat", seatLease: null });
  });

  it("picks the engine from the model and refuses one that cannot serve it", async () => {
    const a = await (await post("/spawn", { model: "claude-sonnet-4-5" })).json();
    expect((await front.client.thread(a.threadId)).engine).toBe("engine_a");
    const alias = await (await post("/spawn", { model: "opus" })).json();
    expect((await front.client.thread(alias.threadId)).engine).toBe("engine_a");
    const other = await (await post("/spawn", { model: "gpt-5" })).json();
    expect((await front.client.thread(other.threadId)).engine).toBe("pi");
    const mismatch = await post("/spawn", { engine: "engine_b", model: "claude-opus-4" });
    expect(mismatch.status).toBe(422);
    expect(await mismatch.json()).toMatchObject({ code: "engine-model-mismatch" });
    const unknown = await post("/spawn", { engine: "engine_z" });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toMatch(/engine/);
    const build = await post("/spawn", { type: "build" });
    expect(build.status).toBe(400);
    expect(await build.json()).toMatchObject({ code: "spawn-cwd-required" });
  });

  it("stores large bodies apart and serves them whole", async () => {
    const { threadId } = await front.client.spawn();
    const text = "large ".repeat(2000);
    const { seq } = await front.client.post(threadId, { text });
    const page = await front.client.tail(threadId, { after: seq - 1 });
    expect(page.events[0]).toMatchObject({ seq, body: { text }, blob: { bytes: text.length + 11 } });
    const notTool = await req(`/threads/${threadId}/tool-results/${seq}`);
    expect(notTool.status).toBe(404);
    expect(await notTool.json()).toMatchObject({ code: "not-a-tool-result" });
  });

  it("edits, releases and deletes held messages, and refuses once not held", async () => {
    const { threadId } = await front.client.spawn();
    const held = await front.client.post(threadId, { text: "draft", hold: true });
    const patch = (seq: number, body: unknown) =>
      req(`/threads/${threadId}/messages/${seq}`, { method: "PATCH", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    expect((await patch(held.seq, { text: "final" })).status).toBe(200);
    expect((await patch(held.seq, { hold: false })).status).toBe(200);
    const late = await patch(held.seq, { text: "too late" });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: "message-not-held" });
    expect((await patch(held.seq, { hold: true })).status).toBe(400);
    const other = await front.client.post(threadId, { text: "scrap", hold: true });
    expect((await req(`/threads/${threadId}/messages/${other.seq}`, { method: "DELETE" })).status).toBe(200);
    expect((await req(`/threads/${threadId}/messages/${other.seq}`, { method: "DELETE" })).status).toBe(409);
    expect((await req(`/threads/${threadId}/messages/777`, { method: "DELETE" })).status).toBe(404);
  });

  it("retires with one archive event, hides it from lists, and restores", async () => {
    const { threadId } = await front.client.spawn({ workspace: "retire-test" });
    const retired = await req(`/threads/${threadId}?reason=finished`, { method: "DELETE" });
    expect(retired.status).toBe(200);
    expect((await front.client.list({ workspace: "retire-test" })).threads).toHaveLength(0);
    expect((await front.client.list({ workspace: "retire-test", archived: "archived" })).threads.map((t) => t.id)).toEqual([threadId]);
    const refused = await post(`/threads/${threadId}/messages`, { text: "x" });
    expect(refused.status).toBe(409);
    await front.client.restore(threadId);
    expect((await front.client.list({ workspace: "retire-test" })).threads.map((t) => t.id)).toEqual([threadId]);
    const page = await front.client.tail(threadId, { after: 0 });
    expect(page.events.filter((e) => e.kind === "archive")).toEqual([expect.objectContaining({ body: { reason: "finished" } })]);
  });

  it("answers a thread's head, held messages, lease, retirement and restore as the contract declares them", async () => {
    // call() fails on an answer the OpenAPI document does not allow (test/support/answer-check.ts).
    const base = front.url;
    const { threadId } = (await call(base, "POST", "/spawn", { title: "shapes" })).body;
    expect((await call(base, "GET", `/threads/${threadId}/head`)).body).toMatchObject({ id: threadId, title: "shapes", type: "chat", role: "chat" });
    const held = (await call(base, "POST", `/threads/${threadId}/messages`, { text: "draft", hold: true })).body;
    expect((await call(base, "PATCH", `/threads/${threadId}/messages/${held.seq}`, { text: "final" })).body.seq).toBe(held.seq + 1);
    expect((await call(base, "DELETE", `/threads/${threadId}/messages/${held.seq}`)).status).toBe(200);
    expect((await call(base, "PUT", `/threads/${threadId}/seat-lease`, { seatLease: "desk-1" })).status).toBe(200);
    expect((await call(base, "GET", `/threads/${threadId}`)).body).toMatchObject({ seatLease: "desk-1", heldMessages: [] });
    expect((await call(base, "DELETE", `/threads/${threadId}?reason=shapes`)).body).toMatchObject({ archived: true });
    expect((await call(base, "POST", `/threads/${threadId}/restore`)).body).toMatchObject({ archived: false });
    expect((await call(base, "GET", `/threads/${threadId}/tail?before=latest&limit=3`)).body.events.map((e: { kind: string }) => e.kind)).toEqual(["restore", "archive", "seat-lease"]);
  });

  it("lists with limits clamped and cursors that page", async () => {
    for (let i = 0; i < 5; i++) await front.client.spawn({ workspace: "listing" });
    const first = await front.client.list({ workspace: "listing", limit: 2 });
    expect(first).toMatchObject({ hasMore: true });
    const second = await front.client.list({ workspace: "listing", limit: 2, after: first.nextAfter! });
    expect(second.threads.map((t) => t.id)).not.toContain(first.threads[0]!.id);
  });

  it("clamps a thread list page to 200, with more than 200 threads to list", async () => {
    const ids: string[] = [];
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (ids.length < 205) ids.push((await front.client.spawn({ workspace: "clamp" })).threadId);
    }));
    // The catalog lists a thread shortly after its spawn.
    await waitFor(async () => (await front.client.list({ workspace: "clamp", limit: 200 })).hasMore);
    const clamped = await front.client.list({ workspace: "clamp", limit: 100000 });
    expect(clamped.threads).toHaveLength(200);
    expect(clamped.hasMore).toBe(true);
    const rest = await front.client.list({ workspace: "clamp", limit: 100000, after: clamped.nextAfter! });
    expect(rest.threads.length + clamped.threads.length).toBe(ids.length);
    expect(new Set([...clamped.threads, ...rest.threads].map((t) => t.id))).toEqual(new Set(ids));
  });
});

describe("bad input", () => {
  it("answers clear JSON errors and keeps serving", async () => {
    const { threadId } = await front.client.spawn();
    const cases: [string, Promise<Response>, number][] = [
      ["malformed JSON", post("/spawn", "{bad"), 400],
      ["malformed JSON without a content-type", req("/spawn", { method: "POST", body: "{bad" }), 400],
      ["a wrong type", post(`/threads/${threadId}/messages`, { text: 42 }), 400],
      ["an unknown field", post("/spawn", { colour: "red" }), 400],
      ["a relative cwd", post("/spawn", { cwd: "here" }), 400],
      ["proxyEnv not of strings", post("/spawn", { proxyEnv: { A: 1 } }), 400],
      ["an unknown thread", req("/threads/thr_0000000000000000000000000a"), 404],
      ["a malformed thread id", req("/threads/nope/tail"), 404],
      ["a garbage cursor", req(`/threads/${threadId}/tail?after=abc`), 400],
      ["a negative cursor", req(`/threads/${threadId}/tail?after=-1`), 400],
      ["a cursor beyond the end", req(`/threads/${threadId}/tail?after=99`), 400],
      ["after and before together", req(`/threads/${threadId}/tail?after=1&before=2`), 400],
      ["limit 0", req(`/threads/${threadId}/tail?limit=0`), 400],
      ["a garbage limit", req(`/threads?limit=ten`), 400],
      ["a garbage list cursor", req(`/threads?after=%%%`), 400],
      ["a bad Last-Event-ID", req(`/threads/${threadId}/follow`, { headers: { "last-event-id": "x" } }), 400],
      ["an oversized body", post(`/threads/${threadId}/messages`, { text: "o".repeat(300_000) }), 413],
      ["an unknown route", req("/no/such/route"), 404],
    ];
    for (const [name, pending, status] of cases) {
      const res = await pending;
      expect(res.status, name).toBe(status);
      const body = await res.json();
      expect(typeof body.error, name).toBe("string");
    }
    // No schema nests this deep; a route whose schema passed unknown fields on would hand the depth to code that recurses.
    const deep = await post("/spawn", `{"title":"deep","x":${"[".repeat(129)}${"]".repeat(129)}}`);
    expect(deep.status).toBe(400);
    expect((await deep.json()).error).toBe("body nests arrays and objects more than 128 levels deep");
    const tooBig = await post(`/threads/${threadId}/messages`, { text: "o".repeat(300_000) });
    expect(await tooBig.json()).toMatchObject({ code: "body-too-large" });
    const page = await front.client.tail(threadId, { after: 0 });
    expect(page.events).toHaveLength(1);
  });

  it("clamps a tail limit over 1000, with more than 1000 events to page", async () => {
    const { threadId } = await front.client.spawn();
    let sent = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent++ < 1004) await front.client.post(threadId, { text: "m", hold: true });
    }));
    const res = await req(`/threads/${threadId}/tail?after=0&limit=5000`);
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(page.events).toHaveLength(1000);
    expect(page).toMatchObject({ hasMore: true, nextAfter: "1000" });
    const older = await (await req(`/threads/${threadId}/tail?before=latest&limit=5000`)).json();
    expect(older.events).toHaveLength(1000);
    expect(older.events[0].seq).toBe(1005);
  });

  it("reports a missing thread to the client library as rejected with its code", async () => {
    const err = await front.client.thread("thr_0000000000000000000000000a").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toMatchObject({ kind: "rejected", status: 404, code: "thread-not-found" });
  });

  it("names the running build on a 404 exactly as /health does", async () => {
    const health = await (await req("/health")).json();
    const missing = await (await req("/threads/x/y/z")).json();
    expect(missing.build).toBe(health.build);
    expect(health.spawn.fields.engine).toEqual(["engine_a", "engine_b", "pi"]);
    expect(Object.keys(health.spawn.fields)).toEqual(
      expect.arrayContaining(["workspace", "title", "role", "engine", "model", "permissions", "cwd", "account", "proxyEnv"]),
    );
  });
});
