import { createServer as createHttp, type Server as HttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Logger } from "../../local-front/process/log.js";
import { frontLimits } from "../../local-front/front/pipe.js";
import { RoutedConnection, type FrontLimits, type Upstream } from "../../local-front/front/routed-pipe.js";

/** Two real HTTP servers stand in for the two workerd processes; each names itself in its answers. */
let backends: HttpServer[] = [];
let raw: Server[] = [];
const fronts: Server[] = [];
let port = 0;
let ups: Upstream[] = [];
/** Every byte the two HTTP backends received, in order. */
let received = "";
/** The front's log lines. */
let logged: string[] = [];
const logger = new Logger({ SERVICE_LOG: "warn" }, (_level, line) => logged.push(line));

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
    if (req.url?.startsWith("/zero/fail")) {
      res.writeHead(500, { "content-type": "application/json", "x-secret": "header-value" });
      res.end(JSON.stringify({ error: "broken" }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const reply = () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ backend: name, url: req.url, bytes: body.length, last: body.subarray(-8).toString() }));
      };
      // Answers later than a client connection may be idle: waiting for an answer is not idleness.
      if (req.url?.endsWith("/slow")) setTimeout(reply, 3 * SHORT.idleMs);
      else reply();
    });
  });
}

/** Limits short enough for the tests that wait on them. */
const SHORT: FrontLimits = { headMs: 150, idleMs: 300 };

const listen = (s: HttpServer | Server) => new Promise<number>((r) => s.listen(0, "127.0.0.1", () => r((s.address() as AddressInfo).port)));

/** A front on its own port, routing by path prefix. */
async function startFront(limits?: FrontLimits): Promise<number> {
  const pick = (target: string) => ["/zero", "/one", "/flaky", "/dead", "/resets", "/pieces"].findIndex((p) => target.startsWith(p));
  const front = createServer((c) => new RoutedConnection(c, (_m, target) => ups[Math.max(0, pick(target))]!, null, { limits, log: logger }));
  fronts.push(front);
  return listen(front);
}

beforeAll(async () => {
  backends = [backend("zero"), backend("one")];
  ups = [];
  // Each HTTP backend sits behind a relay that records what reaches it.
  for (const b of backends) {
    const httpPort = await listen(b);
    const recorder = createServer((s) => {
      const up = connect(httpPort, "127.0.0.1");
      s.on("data", (d: Buffer) => {
        received += d.toString("latin1");
        up.write(d);
      });
      up.pipe(s);
      s.on("close", () => up.destroy());
      up.on("close", () => s.destroy());
      s.on("error", () => up.destroy());
      up.on("error", () => s.destroy());
    });
    ups.push({ host: "127.0.0.1", port: await listen(recorder) });
    raw.push(recorder);
  }
  // "flaky" answers the first request on a connection and drops the connection, unread, when a second comes:
  // what workerd does when its 5 s idle close meets a request. "dead" drops every connection at once.
  // "resets" answers 409 as soon as a head arrives and closes with the body unread, which resets
  // the connection: what workerd does with a large body sent to a route that does not read it.
  let flakyConnections = 0;
  const answer = (n: number) => {
    const body = JSON.stringify({ backend: "flaky", url: `/flaky#${n}`, bytes: 0, last: "" });
    return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  };
  const conflict = JSON.stringify({ error: "no turn is running", code: "no-turn-running" });
  raw.push(
    createServer((s) => {
      const n = ++flakyConnections;
      let requests = 0;
      s.on("data", () => (++requests === 1 ? s.write(answer(n)) : s.destroy()));
    }),
    createServer((s) => s.destroy()),
    createServer((s) => {
      s.once("data", () => {
        s.write(`HTTP/1.1 409 Conflict\r\ncontent-type: application/json\r\ncontent-length: ${conflict.length}\r\n\r\n${conflict}`);
        s.destroy();
      });
    }),
    // "pieces" sends a 100 Continue and then its answer's head in three writes, as a slow process might.
    createServer((s) => {
      s.on("data", async (d: Buffer) => {
        const stream = d.toString("latin1").startsWith("GET /pieces/stream");
        const parts = PIECES(stream);
        for (const part of parts) {
          s.write(part);
          await new Promise((r) => setTimeout(r, 15));
        }
      });
    }),
  );
  for (const r of raw.slice(2)) ups.push({ host: "127.0.0.1", port: await listen(r) });
  port = await startFront();
});

beforeEach(() => {
  received = "";
  logged = [];
});

afterAll(() => {
  for (const f of fronts) f.close();
  for (const b of backends) b.close();
  for (const r of raw) r.close();
});

/** What the "pieces" backend writes, write by write: a 100 Continue, then a head cut in three, then a body. */
const PIECES = (stream: boolean): string[] =>
  stream
    ? ["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-", "type: text/event-stream\r\nconnection: keep-alive\r\ntransfer-", "encoding: chunked\r\n\r\n7\r\ndata: x\r\n", "0\r\n\r\n"]
    : ["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-", "type: application/json\r\ncontent-length: 2\r", "\n\r\n{}"];

/** Writes raw bytes on one connection and collects what comes back until it closes or `until` holds. */
function exchange(bytes: string | Buffer, until: (text: string) => boolean, writeAfter?: (s: Socket) => void, to = port): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(to, "127.0.0.1");
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
    s.on("error", () => {});
    s.write(bytes);
    writeAfter?.(s);
  });
}

const bodies = (text: string) => [...text.matchAll(/\{"backend".*?\}(?=HTTP|$)/g)].map((m) => JSON.parse(m[0]) as { backend: string; url: string; bytes: number; last: string });
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
const post = (path: string, body: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** A whole answer the front wrote itself: status, headers and JSON body. */
function refusal(text: string): { status: number; headers: string; body: { error: string; code: string } } {
  const [top, body] = text.split("\r\n\r\n") as [string, string];
  return { status: Number(/^HTTP\/1.1 (\d{3}) /.exec(top)?.[1]), headers: top.toLowerCase(), body: JSON.parse(body) };
}

/** Resolves once `check` holds, looking each time an event loop turn has passed. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

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

  it("passes a chunked body with extensions and trailers on without them", async () => {
    const chunked = `POST /one/ext HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n3;a="b"\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n${get("/zero/after")}`;
    const text = await exchange(chunked, (t) => bodies(t).length === 2);
    expect(bodies(text).map((b) => [b.url, b.bytes, b.last])).toEqual([["/one/ext", 8, "helloabc"], ["/zero/after", 0, ""]]);
    expect(received).toContain("\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\nGET /zero/after");
    expect(received).not.toMatch(/ext=|X-Trailer/);
  });

  it("passes a stream through as it is written, not when it ends, and closes the connection with it", async () => {
    const first = await exchange(get("/one/stream"), (t) => t.includes("data: first"));
    expect(first).toContain("text/event-stream");
    expect(first).not.toContain("data: last");
    // The stream's head tells the client the connection is the stream's alone.
    expect(first.slice(0, first.indexOf("\r\n\r\n")).toLowerCase()).toMatch(/\r\nconnection: close$/m);
    expect(first.toLowerCase().match(/\r\nconnection:/g)).toHaveLength(1);
    // A request sent after it anyway never reaches a process unread by the front: the connection ends instead.
    const whole = await exchange(get("/one/stream") + get("/zero/next"), () => false);
    expect(whole).toContain("data: last");
    expect(bodies(whole)).toEqual([]);
  });

  it("relays a 1xx and a head that arrives in pieces unchanged, and amends a stream's head however it arrived", async () => {
    const plain = await exchange(get("/pieces/json"), (t) => t.endsWith("{}"));
    expect(plain).toBe(PIECES(false).join(""));
    const stream = await exchange(get("/pieces/stream"), () => false);
    expect(stream).toBe(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n7\r\ndata: x\r\n0\r\n\r\n",
    );
  });

  it("closes after an answer that came before the request body, and after Connection: close", async () => {
    const early = await exchange(`POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial`, () => false);
    expect(early).toMatch(/^HTTP\/1.1 413/);
    const closing = await exchange(`GET /zero/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, () => false);
    expect(bodies(closing)).toHaveLength(1);
  });

  it("relays an answer a process sent before the body, though it reset the connection while the body was still going", async () => {
    const body = Buffer.alloc(5_000_000, 97);
    const statuses: string[] = [];
    for (let i = 0; i < 20; i++) {
      const text = await exchange(`POST /resets HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`, () => false, (s) => s.write(body, () => {}));
      statuses.push(text.slice(0, 12) + (/"code":"([^"]+)"/.exec(text)?.[1] ?? ""));
    }
    expect(new Set(statuses)).toEqual(new Set(["HTTP/1.1 409no-turn-running"]));
    expect(logged).toEqual([]);
  });

  it("sends a request again, once, when a reused connection drops it unanswered; answers 502 when a process is gone, and logs it", async () => {
    const text = await exchange(get("/flaky") + get("/flaky") + get("/zero/z"), (t) => bodies(t).length === 3);
    expect(bodies(text).map((b) => b.url)).toEqual([expect.stringMatching(/^\/flaky#\d+$/), expect.stringMatching(/^\/flaky#\d+$/), "/zero/z"]);
    expect(bodies(text)[0]!.url).not.toBe(bodies(text)[1]!.url);
    expect(logged).toEqual([]);
    const dead = await exchange(get("/dead/x?token=sekrit"), () => false);
    expect(dead).toMatch(/^HTTP\/1.1 502 /);
    expect(dead).toContain('"code":"upstream-unavailable"');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/ error .*status=502 method=GET path=\/dead\/x$/);
  });

  it("logs each 5xx a process answers with its status, method and path, and nothing of the query, headers or body", async () => {
    const text = await exchange(post("/zero/fail?token=sekrit", "body-secret"), (t) => t.includes('"broken"'));
    expect(text).toMatch(/^HTTP\/1.1 500 /);
    expect(logged).toEqual(["agent-runtime: error workerd answered 500 status=500 method=POST path=/zero/fail"]);
  });

  it("closes after an HTTP/1.0 request without keep-alive, and after a Connection list naming close", async () => {
    const old = await exchange(`GET /zero/a HTTP/1.0\r\nHost: x\r\n\r\n`, () => false);
    expect(bodies(old)).toHaveLength(1);
    const listed = await exchange(`GET /zero/a HTTP/1.1\r\nHost: x\r\nConnection: te, close\r\n\r\n`, () => false);
    expect(bodies(listed)).toHaveLength(1);
  });

  it("ignores an empty line before a request line", async () => {
    const text = await exchange(`${post("/zero/a", "abc")}\r\n${get("/one/b")}`, (t) => bodies(t).length === 2);
    expect(bodies(text).map((b) => b.url)).toEqual(["/zero/a", "/one/b"]);
  });

  it("answers what it cannot frame with JSON and closes, and no byte of it or of what follows reaches a process", async () => {
    const cases: [string, number, string][] = [
      ["POST /zero/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400, "bad-request-framing"],
      ["POST /zero/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", 400, "bad-request-framing"],
      ["POST /zero/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400, "bad-request-framing"],
      ["GET /zero/a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "bad-request-framing"],
      ["GET /zero/a HTTP/1.0\r\n\r\n", 400, "bad-request-framing"],
      ["GET http://x/zero/a HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad-request-framing"],
      ["CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 400, "bad-request-framing"],
      ["GET /zero/%2e%2e/one HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad-request-framing"],
      ["GET /zero/a HTTP/1.1\nHost: x\n\n", 400, "bad-request-framing"],
      ["NONSENSE\r\n\r\n", 400, "bad-request-framing"],
      ["FOO /zero/a HTTP/1.1\r\nHost: x\r\n\r\n", 501, "method-not-implemented"],
      ["get /zero/a HTTP/1.1\r\nHost: x\r\n\r\n", 501, "method-not-implemented"],
      [`GET /zero/a HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(70_000)}\r\n\r\n`, 431, "head-too-large"],
      // The body's first bytes arrive with the head: checked before the head goes.
      ["POST /zero/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n", 400, "bad-request-framing"],
    ];
    for (const [bytes, status, code] of cases) {
      const text = await exchange(bytes + post("/zero/smuggled", "x"), () => false);
      const answer = refusal(text);
      expect([answer.status, answer.body.code], JSON.stringify(bytes.slice(0, 60))).toEqual([status, code]);
      expect(answer.headers).toContain("content-type: application/json");
      expect(answer.headers).toContain("connection: close");
      expect(answer.body.error).toEqual(expect.any(String));
      expect(text).not.toContain("smuggled");
    }
    await new Promise((r) => setImmediate(r));
    expect(received).toBe("");
    // The 501s are 5xx the front sent: logged, method and path only.
    expect(logged).toEqual([
      "agent-runtime: warn refused with 501 status=501 method=FOO path=/zero/a",
      "agent-runtime: warn refused with 501 status=501 method=get path=/zero/a",
    ]);
  });

  it("refuses a chunk size it cannot count after the head went, and cuts the process's request off", async () => {
    const head = "POST /zero/cut HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    const text = await exchange(head, () => false, (s) => {
      void until(() => received.includes("POST /zero/cut")).then(() => s.write("5\r\nhello\r\n1ffffffffffffffffff\r\n" + get("/zero/after")));
    });
    expect(refusal(text)).toMatchObject({ status: 400, body: { code: "bad-request-framing" } });
    expect(received).not.toContain("/zero/after");
  });

  it("answers 408 to a head that trickles past its time limit, though bytes keep coming", async () => {
    const short = await startFront(SHORT);
    const text = await exchange("GET /zero/a HTTP/1.1\r\nHost: x\r\nX-Slow: ", () => false, (s) => {
      const drip = setInterval(() => (s.destroyed ? clearInterval(drip) : s.write("a")), 20);
    }, short);
    expect(refusal(text)).toMatchObject({ status: 408, body: { code: "request-timeout" } });
    expect(refusal(text).headers).toContain("connection: close");
    expect(received).toBe("");
  });

  it("answers 408 to a body that stalls, and closes a connection idle between requests", async () => {
    const short = await startFront(SHORT);
    const stalled = await exchange("POST /zero/stall HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly some", () => false, undefined, short);
    expect(refusal(stalled)).toMatchObject({ status: 408, body: { code: "request-timeout" } });
    const idle = await exchange(get("/zero/a"), () => false, undefined, short);
    expect(bodies(idle)).toHaveLength(1);
    expect(idle.endsWith("}")).toBe(true);
  });

  it("keeps a body that trickles without stalling, and waits for an answer as long as it takes", async () => {
    const short = await startFront(SHORT);
    const body = "0123456789".repeat(3);
    const text = await exchange(`POST /zero/trickle HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`, (t) => bodies(t).length === 1, (s) => {
      let i = 0;
      const drip = setInterval(() => (i < body.length ? s.write(body[i++]!) : clearInterval(drip)), 20);
    }, short);
    expect(bodies(text)[0]).toMatchObject({ bytes: body.length, last: "23456789" });
    const slow = await exchange(get("/one/slow"), (t) => bodies(t).length === 1, undefined, short);
    expect(bodies(slow)[0]).toMatchObject({ backend: "one", url: "/one/slow" });
  });

  it("reads its time limits from the environment, and refuses a bad one", () => {
    expect(frontLimits({})).toEqual({ headMs: 10_000, idleMs: 30_000 });
    expect(frontLimits({ SERVICE_HEAD_TIMEOUT_MS: "500", SERVICE_IDLE_TIMEOUT_MS: "700" })).toEqual({ headMs: 500, idleMs: 700 });
    expect(() => frontLimits({ SERVICE_HEAD_TIMEOUT_MS: "0" })).toThrow(/SERVICE_HEAD_TIMEOUT_MS must be a whole number of milliseconds above 0, not "0"/);
    expect(() => frontLimits({ SERVICE_IDLE_TIMEOUT_MS: "1e3" })).toThrow(/SERVICE_IDLE_TIMEOUT_MS must be/);
  });

  it("forwards an upgrade request as an ordinary one: no route upgrades", async () => {
    const text = await exchange(`POST /zero/up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\nContent-Length: 2\r\n\r\nhi`, (t) => bodies(t).length === 1);
    expect(bodies(text)[0]).toMatchObject({ url: "/zero/up", bytes: 2 });
  });
});
