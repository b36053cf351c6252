import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { FollowRelays } from "../../local-front/front/follow-relay.js";
import { readCallerPolicy } from "../../src/rules/caller-policy.js";
import { until } from "../support/sse.js";

const ID = "thr_01m81kt70y1m1zf7shrrwmfw6s";
const frame = (seq: number) => `id: ${seq}\nevent: message\ndata: {"seq":${seq}}\n\n`;

/** A stand-in for workerd's follow route: streams written to by the test, each answered once `opened` resolves. */
async function upstream(opened: Promise<void> = Promise.resolve()): Promise<{ port: number; asked: number; streams: ServerResponse[]; close(): void }> {
  const out = { port: 0, asked: 0, streams: [] as ServerResponse[], close: () => server.close() };
  const server = createHttpServer((_req, res) => {
    out.asked++;
    void opened.then(() => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("retry: 2000\n\n");
      out.streams.push(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  out.port = (server.address() as AddressInfo).port;
  return out;
}

/** A front that hands every connection to the relays as a follow of ID from `after`. */
async function front(relays: FollowRelays, after: number): Promise<Server & { port: number }> {
  const server = createServer((socket) => {
    if (!relays.serve(socket, { threadId: ID, after, host: "127.0.0.1" })) socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

/** A follower's ids, in the order they came. */
function follower(port: number): { ids: number[]; joined: boolean; close(): void } {
  const ids: number[] = [];
  let text = "";
  const socket = connect({ host: "127.0.0.1", port });
  socket.setEncoding("latin1");
  const out = { ids, joined: false, close: () => socket.destroy() };
  socket.on("data", (chunk: string) => {
    out.joined = true;
    text += chunk;
    let cut: number;
    while ((cut = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, cut);
      text = text.slice(cut + 2);
      const m = /(?:^|\n)id: (\d+)/.exec(block);
      if (m) ids.push(Number(m[1]));
    }
  });
  return out;
}

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

describe("the front's follow relay", () => {
  it("gives each follower every frame once and in order when frames come while it is still writing to the others", async () => {
    const up = await upstream();
    const relays = new FollowRelays(() => ({ host: "127.0.0.1", port: up.port }), 60_000, readCallerPolicy(undefined, undefined));
    const server = await front(relays, 1);
    cleanup.push(() => relays.close(), () => server.close(), () => up.close());
    const followers = Array.from({ length: 600 }, () => follower(server.port));
    cleanup.push(() => followers.forEach((f) => f.close()));
    await until(() => followers.every((f) => f.joined));
    // One frame a turn of the loop: frames land while the relay is between its slices and between its rounds.
    for (let seq = 2; seq <= 201; seq++) {
      up.streams[0]!.write(frame(seq));
      await new Promise((r) => setImmediate(r));
    }
    await until(() => followers.every((f) => f.ids.at(-1) === 201));
    const all = Array.from({ length: 200 }, (_, k) => k + 2);
    for (const f of followers) expect(f.ids).toEqual(all);
    expect(up.streams).toHaveLength(1);
  });

  it("closes its stream from workerd when every follower left before it opened", async () => {
    let open!: () => void;
    const up = await upstream(new Promise<void>((r) => (open = r)));
    const relays = new FollowRelays(() => ({ host: "127.0.0.1", port: up.port }), 60_000, readCallerPolicy(undefined, undefined));
    const server = await front(relays, 1);
    cleanup.push(() => relays.close(), () => server.close(), () => up.close());
    const gone = Array.from({ length: 3 }, () => follower(server.port));
    await until(() => up.asked === 1);
    for (const f of gone) f.close();
    open();
    await until(() => up.streams.length === 1);
    await until(() => up.streams[0]!.destroyed, 5_000);
  });

  it("answers every follower that waited while its stream opened with workerd's refusal, asking workerd once", async () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    let asked = 0;
    const up = createHttpServer((_req, res) => {
      asked++;
      void opened.then(() => {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "no such thread", code: "thread-not-found" }));
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    const relays = new FollowRelays(() => ({ host: "127.0.0.1", port: (up.address() as AddressInfo).port }), 60_000, readCallerPolicy(undefined, undefined));
    const server = await front(relays, 1);
    cleanup.push(() => relays.close(), () => server.close(), () => up.close());
    const answers = Array.from({ length: 5 }, () => {
      const socket = connect({ host: "127.0.0.1", port: server.port });
      cleanup.push(() => socket.destroy());
      let text = "";
      socket.setEncoding("utf8").on("data", (d: string) => (text += d));
      return { text: () => text, ended: new Promise<void>((r) => socket.on("end", r)) };
    });
    await until(() => asked === 1);
    // The others arrive while the first's request is out: they wait for it rather than ask workerd each.
    await new Promise((r) => setTimeout(r, 100));
    open();
    await Promise.all(answers.map((a) => a.ended));
    for (const a of answers) {
      expect(a.text()).toMatch(/^HTTP\/1\.1 404 /);
      expect(a.text()).toContain('"code":"thread-not-found"');
    }
    expect(asked).toBe(1);
  });

  it("ends its request to workerd when it is closed before workerd answers (the front stopping)", async () => {
    let asked = false;
    let requestGone = false;
    const up = createHttpServer((req) => {
      asked = true;
      req.socket.on("close", () => (requestGone = true));
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    const relays = new FollowRelays(() => ({ host: "127.0.0.1", port: (up.address() as AddressInfo).port }), 60_000, readCallerPolicy(undefined, undefined));
    const server = await front(relays, 1);
    cleanup.push(() => server.close(), () => up.closeAllConnections(), () => up.close());
    const f = follower(server.port);
    cleanup.push(() => f.close());
    await until(() => asked);
    relays.close();
    await until(() => requestGone, 5_000);
  });
});
