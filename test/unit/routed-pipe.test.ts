import { createServer as createHttp, type Server as HttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RoutedConnection, type Upstream } from "../../local-front/routed-pipe.js";

/** Two real HTTP servers stand in for the two workerd processes; each names itself in its answers. */
let backends: HttpServer[] = [];
let raw: Server[] = [];
let front: Server;
let port = 0;

function backend(name: string): HttpServer {
  return createHttp((req, res) => {
    if (req.url === "/early") {
      res.writeHead(413, { "content-type": "application/json", connection: "close" });
      res.end(JSON.stringify({ error: "too large" }));
      return;
    }
    if (req.url?.endsWith("/stream")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      setTimeout(() => res.end("data: last\n\n"), 300);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ backend: name, url: req.url, bytes: body.length, last: body.subarray(-8).toString() }));
    });
  });
}

const listen = (s: HttpServer | Server) => new Promise<number>((r) => s.listen(0, "127.0.0.1", () => r((s.address() as AddressInfo).port)));

beforeAll(async () => {
  backends = [backend("zero"), backend("one")];
  const ups: Upstream[] = [];
  for (const b of backends) ups.push({ host: "127.0.0.1", port: await listen(b) });
  // "flaky" answers the first request on a connection and drops the connection, unread, when a second comes:
  // what workerd does when its 5 s idle close meets a request. "dead" drops every connection at once.
  let flakyConnections = 0;
  const answer = (n: number) => {
    const body = JSON.stringify({ backend: "flaky", url: `/flaky#${n}`, bytes: 0, last: "" });
    return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  };
  raw = [
    createServer((s) => {
      const n = ++flakyConnections;
      let requests = 0;
      s.on("data", () => (++requests === 1 ? s.write(answer(n)) : s.destroy()));
    }),
    createServer((s) => s.destroy()),
  ];
  for (const r of raw) ups.push({ host: "127.0.0.1", port: await listen(r) });
  const pick = (target: string) => ["/zero", "/one", "/flaky", "/dead"].findIndex((p) => target.startsWith(p));
  front = createServer((c) => new RoutedConnection(c, (_m, target) => ups[Math.max(0, pick(target))]!, null));
  port = await listen(front);
});

afterAll(() => {
  front.close();
  for (const b of backends) b.close();
  for (const r of raw) r.close();
});

/** Writes raw bytes on one connection and collects what comes back until it closes or `until` holds. */
function exchange(bytes: string | Buffer, until: (text: string) => boolean, writeAfter?: (s: ReturnType<typeof connect>) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    let got = "";
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`timed out with ${JSON.stringify(got)}`));
    }, 5000);
    s.on("data", (d) => {
      got += d.toString("latin1");
      if (until(got)) {
        clearTimeout(timer);
        s.destroy();
        resolve(got);
      }
    });
    s.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.on("error", reject);
    s.write(bytes);
    writeAfter?.(s);
  });
}

const bodies = (text: string) => [...text.matchAll(/\{"backend".*?\}(?=HTTP|$)/g)].map((m) => JSON.parse(m[0]) as { backend: string; url: string; bytes: number; last: string });
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
const post = (path: string, body: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("the front's routed pipe", () => {
  it("sends each request on one connection to its own process and answers in order, pipelined or not", async () => {
    const paths = ["/zero/a", "/one/b", "/zero/c", "/one/d", "/one/e", "/zero/f"];
    const text = await exchange(paths.map((p, i) => (i % 2 ? get(p) : post(p, `body-${i}`))).join(""), (t) => bodies(t).length === paths.length);
    expect(bodies(text).map((b) => [b.backend, b.url])).toEqual(paths.map((p) => [p.startsWith("/one") ? "one" : "zero", p]));
    expect(bodies(text)[2]).toMatchObject({ bytes: 6, last: "body-2" });
  });

  it("streams a large body that arrives in pieces, and a chunked one", async () => {
    const big = "x".repeat(1_000_000) + "THE-END!";
    const head = `POST /one/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${big.length}\r\n\r\n`;
    const text = await exchange(head, (t) => bodies(t).length === 1, (s) => {
      for (let i = 0; i < big.length; i += 65_536) s.write(big.slice(i, i + 65_536));
    });
    expect(bodies(text)[0]).toMatchObject({ backend: "one", bytes: big.length, last: "THE-END!" });

    const chunked = `POST /one/chunked HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n${get("/zero/after")}`;
    const both = await exchange(chunked, (t) => bodies(t).length === 2);
    expect(bodies(both).map((b) => [b.backend, b.bytes])).toEqual([["one", 8], ["zero", 0]]);
  });

  it("passes a stream through as it is written, not when it ends, and leaves the connection to it", async () => {
    const started = Date.now();
    const first = await exchange(get("/one/stream"), (t) => t.includes("data: first"));
    expect(Date.now() - started).toBeLessThan(250);
    expect(first).toContain("text/event-stream");
    // The connection became the stream's: what follows on it goes to the same process, after the stream.
    const whole = await exchange(get("/one/stream") + get("/zero/next"), (t) => bodies(t).length === 1);
    expect(bodies(whole)[0]).toMatchObject({ backend: "one", url: "/zero/next" });
    expect(whole.indexOf("data: last")).toBeLessThan(whole.indexOf('"url":"/zero/next"'));
  });

  it("closes after an answer that came before the request body, and after Connection: close", async () => {
    const early = await exchange(`POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial`, () => false);
    expect(early).toMatch(/^HTTP\/1.1 413/);
    const closing = await exchange(`GET /zero/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, () => false);
    expect(bodies(closing)).toHaveLength(1);
  });

  it("sends a request again, once, when a reused connection drops it unanswered; answers 502 when a process is gone", async () => {
    const text = await exchange(get("/flaky") + get("/flaky") + get("/zero/z"), (t) => bodies(t).length === 3);
    expect(bodies(text).map((b) => b.url)).toEqual([expect.stringMatching(/^\/flaky#\d+$/), expect.stringMatching(/^\/flaky#\d+$/), "/zero/z"]);
    expect(bodies(text)[0]!.url).not.toBe(bodies(text)[1]!.url);
    const dead = await exchange(get("/dead"), () => false);
    expect(dead).toMatch(/^HTTP\/1.1 502 /);
    expect(dead).toContain('"code":"upstream-unavailable"');
  });

  it("closes after an HTTP/1.0 request without keep-alive, and after a Connection list naming close", async () => {
    const old = await exchange(`GET /zero/a HTTP/1.0\r\nHost: x\r\n\r\n`, () => false);
    expect(bodies(old)).toHaveLength(1);
    const listed = await exchange(`GET /zero/a HTTP/1.1\r\nHost: x\r\nConnection: te, close\r\n\r\n`, () => false);
    expect(bodies(listed)).toHaveLength(1);
  });

  it("hands what it cannot frame to home as plain bytes, which answers it", async () => {
    const text = await exchange("NONSENSE\r\n\r\n", () => false);
    expect(text).toMatch(/^HTTP\/1.1 400/);
  });
});
