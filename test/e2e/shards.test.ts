import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfThread, type ShardLayout } from "../../src/shared/shards.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, waitFor } from "../support/http.js";

/** The host runs as two workerd processes with threads spread by id (docs/decisions.md, "Two workerd processes"). */
let front: Front;
let layout: ShardLayout;
const base = () => front.url;

beforeAll(async () => {
  front = await startFront();
  layout = JSON.parse(readFileSync(join(front.dataDir, "shards.json"), "utf8")) as ShardLayout;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
});

async function spawn(body: object = {}): Promise<string> {
  const r = await call(base(), "POST", "/spawn", body);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

/** Spawns until one thread sits on each shard. */
async function onBothShards(): Promise<[string, string]> {
  const found: (string | undefined)[] = [];
  for (let i = 0; i < 40 && !(found[0] && found[1]); i++) {
    const id = await spawn();
    found[shardOfThread(id, layout)] ??= id;
  }
  expect(found[0] && found[1]).toBeTruthy();
  return [found[0]!, found[1]!];
}

const storesIn = (dir: string) => readdirSync(join(front.dataDir, dir, "agent-runtime-Thread")).filter((n) => n.endsWith(".sqlite") && n !== "metadata.sqlite");

describe("threads spread over two workerd processes", () => {
  it("fixes the layout of a new data directory and keeps each thread's store in its own shard's directory", async () => {
    expect(layout).toEqual({ count: 2, since: 0 });
    const before = [storesIn("do").length, storesIn("do-1").length];
    const [home, away] = await onBothShards();
    expect(storesIn("do").length).toBeGreaterThan(before[0]!);
    expect(storesIn("do-1").length).toBeGreaterThan(before[1]!);
    for (const id of [home, away]) {
      expect((await call(base(), "POST", `/threads/${id}/messages`, { text: "hello", hold: true })).status).toBe(202);
      expect((await events(base(), id)).map((e) => e.kind)).toEqual(["spawn", "message"]);
    }
    const listed = (await call(base(), "GET", "/threads?limit=200")).body.threads.map((t: { id: string }) => t.id);
    expect(listed).toEqual(expect.arrayContaining([home, away]));
  });

  it("runs a turn on either shard, with the catalog and the workspace feed on home kept current", async () => {
    const [home, away] = await onBothShards();
    for (const id of [home, away]) {
      const sent = await call(base(), "POST", `/threads/${id}/send`, { text: "hi" });
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ outcome: "completed", reply: { text: "echo: hi" } });
    }
    await waitFor(async () => {
      const rows = (await call(base(), "GET", "/threads?limit=200")).body.threads as { id: string; stage: string }[];
      return [home, away].every((id) => rows.some((r) => r.id === id && r.stage === "idle")) && rows;
    });
    const feed = (await call(base(), "GET", "/workspaces/default/tail?after=0&limit=1000")).body.events as { threadId: string | null; kind: string }[];
    for (const id of [home, away]) expect(feed.filter((e) => e.threadId === id).map((e) => e.kind)).toEqual(expect.arrayContaining(["thread-spawned", "thread-changed"]));
  });

  it("forks across shards: the child's context is the parent's conversation, wherever each lives", async () => {
    const [home, away] = await onBothShards();
    for (const parent of [home, away]) {
      const said = await call(base(), "POST", `/threads/${parent}/send`, { text: `remember ${parent}` });
      const children: string[] = [];
      while (new Set(children.map((c) => shardOfThread(c, layout))).size < 2 && children.length < 20) {
        const forked = await call(base(), "POST", `/threads/${parent}/fork`, { atSeq: said.body.reply.seq });
        expect(forked.status).toBe(201);
        children.push(forked.body.threadId);
      }
      expect(new Set(children.map((c) => shardOfThread(c, layout))).size).toBe(2);
      const listed = (await call(base(), "GET", `/threads?parent=${parent}&limit=200`)).body.threads.map((t: { id: string }) => t.id);
      expect(new Set(listed)).toEqual(new Set(children));
      for (const child of children.slice(0, 2)) {
        const head = (await call(base(), "GET", `/threads/${child}/head`)).body;
        expect(head.parent).toBe(parent);
        const sent = await call(base(), "POST", `/threads/${child}/send`, { text: "and now" });
        expect(sent.body.outcome).toBe("completed");
        const log = await events(base(), child);
        expect(log.map((e) => e.kind).slice(0, 2)).toEqual(["spawn", "fork"]);
        expect(JSON.stringify(log[1]!.body)).toContain(`remember ${parent}`);
      }
    }
  });

  it("refuses new work on both shards the moment the drain is armed, and takes it again once disarmed", async () => {
    const [home, away] = await onBothShards();
    for (const id of [home, away]) expect((await call(base(), "POST", `/threads/${id}/messages`, { text: "warm", hold: true })).status).toBe(202);
    expect((await call(base(), "POST", "/drain", { reason: "shards" })).status).toBe(200);
    try {
      for (const id of [home, away]) {
        const refused = await call(base(), "POST", `/threads/${id}/messages`, { text: "x", hold: true });
        expect(refused.status).toBe(503);
        expect(refused.body.code).toBe("draining");
      }
    } finally {
      expect((await call(base(), "DELETE", "/drain")).status).toBe(200);
    }
    for (const id of [home, away]) expect((await call(base(), "POST", `/threads/${id}/messages`, { text: "y", hold: true })).status).toBe(202);
  });

  it("reports request timings from both processes", async () => {
    const [home, away] = await onBothShards();
    const count = async () =>
      ((await call(base(), "GET", "/timings")).body.routes as { route: string; count: number }[]).find((r) => r.route === "GET /threads/:id/head")?.count ?? 0;
    const before = await count();
    for (let i = 0; i < 5; i++) for (const id of [home, away]) await call(base(), "GET", `/threads/${id}/head`);
    expect((await count()) - before).toBe(10);
  });

  it("finds every thread on the same shard after a restart", async () => {
    const [home, away] = await onBothShards();
    await front.stop();
    front = await startFront({ dataDir: front.dataDir });
    expect(JSON.parse(readFileSync(join(front.dataDir, "shards.json"), "utf8"))).toEqual(layout);
    for (const id of [home, away]) expect((await events(base(), id)).map((e) => e.kind)).toEqual(["spawn"]);
  });
});
