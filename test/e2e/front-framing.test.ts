import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { useFront } from "../support/use-front.js";

/**
 * The fuzzing cases of issue 13, sent as raw bytes to the real front: each gets a JSON
 * answer of the front's own (4xx, or 501 for a method no route uses) and the connection
 * closes; framing HTTP/1.1 allows reaches the worker; the front serves normally after.
 * Short time limits, so the trickle cases end soon.
 */
const front = useFront({ env: { SERVICE_HEAD_TIMEOUT_MS: "1000", SERVICE_IDLE_TIMEOUT_MS: "2000" } });
const port = () => Number(new URL(front().url).port);
const host = () => `127.0.0.1:${port()}`;

interface Answer {
  status: number;
  headers: Map<string, string>;
  text: string;
  json: any;
}

/** Writes `bytes` on a fresh connection and reads until the front closes it. */
function exchange(bytes: string | Buffer, writeAfter?: (s: Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port(), "127.0.0.1");
    const got: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no close within 20 s; got ${JSON.stringify(Buffer.concat(got).toString("latin1").slice(0, 300))}`));
    }, 20_000);
    s.on("data", (d: Buffer) => got.push(d));
    s.on("error", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got).toString("latin1"));
    });
    s.write(bytes);
    writeAfter?.(s);
  });
}

/** The answers in `raw`, in order (bodies framed by Content-Length, as workerd and the front write them). */
function answers(raw: string): Answer[] {
  const out: Answer[] = [];
  let rest = raw;
  while (rest.length) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) throw new Error(`not an answer: ${JSON.stringify(rest.slice(0, 200))}`);
    const [top, ...lines] = rest.slice(0, end).split("\r\n");
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    const length = Number(headers.get("content-length") ?? rest.length - end - 4);
    const text = rest.slice(end + 4, end + 4 + length);
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    out.push({ status: Number(top!.split(" ")[1]), headers, text, json });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** One answer, and the connection closed after it. */
async function only(bytes: string | Buffer, writeAfter?: (s: Socket) => void): Promise<Answer> {
  const all = answers(await exchange(bytes, writeAfter));
  expect(all).toHaveLength(1);
  return all[0]!;
}

const req = (method: string, path: string, body?: string, extra = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n${extra}${body === undefined ? "" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`}\r\n${body ?? ""}`;

async function spawn(): Promise<string> {
  const a = await only(req("POST", "/spawn", "{}"));
  expect(a.status).toBe(201);
  return a.json.threadId as string;
}

function expectRefusal(a: Answer, status: number, code: string): void {
  expect([a.status, a.json?.code], a.text).toEqual([status, code]);
  expect(a.headers.get("content-type")).toBe("application/json");
  expect(a.headers.get("connection")).toBe("close");
  expect(a.json.error).toEqual(expect.any(String));
}

describe("the front's framing, end to end", () => {
  it("refuses each request-smuggling case of the fuzzing report with JSON 400, and forwards nothing pipelined after it", async () => {
    const h = () => `Host: ${host()}\r\n`;
    const cases = [
      `POST /spawn HTTP/1.1\r\n${h()}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`,
      `POST /spawn HTTP/1.1\r\n${h()}Content-Length: 2\r\nContent-Length: 7\r\n\r\n{}`,
      `POST /spawn HTTP/1.1\r\n${h()}Content-Length: -1\r\n\r\n{}`,
      `POST /spawn HTTP/1.1\r\n${h()}Content-Length: 1e3\r\n\r\n{}`,
      `POST /spawn HTTP/1.1\r\n${h()}Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `POST /spawn HTTP/1.1\r\n${h()}Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `POST /spawn HTTP/1.1\r\n${h()}Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `GET /health HTTP/1.1\r\n${h()}Host: attacker.example\r\n\r\n`,
      `GET http://${host()}/health HTTP/1.1\r\n${h()}\r\n`,
      `CONNECT ${host()} HTTP/1.1\r\n${h()}\r\n`,
      `OPTIONS * HTTP/1.1\r\n${h()}\r\n`,
      `GET /health HTTP/1.1\r\n\r\n`,
      `GET /health HTTP/1.0\r\n\r\n`,
      `GET /health HTTP/1.1\nHost: ${host()}\n\n`,
      `GET /health HTTP/1.1\r\n${h()}Bad Header: x\r\n\r\n`,
      `POST /accounts/%2e%2e/access-token HTTP/1.1\r\n${h()}\r\n`,
      `POST /accounts/..%2Faccounts/access-token HTTP/1.1\r\n${h()}\r\n`,
      `GET /threads/x/../../accounts HTTP/1.1\r\n${h()}\r\n`,
      `POST /spawn HTTP/1.1\r\n${h()}Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffffffff\r\n{}\r\n0\r\n\r\n`,
    ];
    for (const c of cases) {
      // A spawn pipelined behind each bad head: never forwarded, so never answered.
      const all = answers(await exchange(c + req("POST", "/spawn", '{"title":"smuggled"}')));
      expect(all, JSON.stringify(c)).toHaveLength(1);
      expectRefusal(all[0]!, 400, "bad-request-framing");
    }
    const listed = answers(await exchange(req("GET", "/threads?limit=100")))[0]!;
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).not.toContain("smuggled");
  });

  it("refuses a head over 64 KiB with 431, and methods no route uses with 501 naming the ones it does", async () => {
    expectRefusal(await only(req("GET", "/health", undefined, `X-Big: ${"a".repeat(70_000)}\r\n`)), 431, "head-too-large");
    for (const method of ["FOO", "M-SEARCH", "get", "TRACE"]) {
      const a = await only(req(method, "/health"));
      expectRefusal(a, 501, "method-not-implemented");
      expect(a.json.error).toContain("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    }
    expect(front().output()).toMatch(/warn refused with 501 status=501 method=FOO path=\/health/);
  });

  it("answers a refused HEAD with no body, so a client reading the next answer stays in step", async () => {
    const raw = await exchange(req("HEAD", "/threads/%2F/turn"));
    const [top, rest] = raw.split("\r\n\r\n") as [string, string];
    expect(top).toMatch(/^HTTP\/1.1 400 /);
    expect(top).toMatch(/content-length: [1-9]\d*/);
    expect(rest).toBe("");
  });

  it("refuses an account id that is not a name in the worker too", async () => {
    const a = await only(req("POST", "/accounts/a%20b/access-token"));
    expect([a.status, a.json.code]).toEqual([404, "account-not-found"]);
    expect(a.json.error).toMatch(/account ids are letters, digits/);
  });

  it("takes a chunked body with chunk extensions and a trailer section", async () => {
    const id = await spawn();
    const text = JSON.stringify({ text: "chunked with extensions" });
    const body = `5;ext=1\r\n${text.slice(0, 5)}\r\n${(text.length - 5).toString(16)};name="quoted"\r\n${text.slice(5)}\r\n0\r\nX-Checksum: abc\r\n\r\n`;
    const a = await only(`POST /threads/${id}/messages HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body}`);
    expect(a.status).toBe(202);
    const tail = await only(req("GET", `/threads/${id}/tail?after=0`));
    expect(tail.json.events.map((e: { body: { text?: string } }) => e.body.text)).toContain("chunked with extensions");
  });

  it("forwards an upgrade request as an ordinary one: no route upgrades", async () => {
    const upgrade = "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    const a = await only(`GET /health HTTP/1.1\r\nHost: ${host()}\r\nConnection: Upgrade, close\r\n${upgrade}\r\n`);
    expect([a.status, a.json.ok]).toEqual([200, true]);
  });

  it("relays the answer a route gives before reading a large body, every time", async () => {
    const id = await spawn();
    const seen: string[] = [];
    const big = (size: number) => JSON.stringify({ text: "x".repeat(size) });
    for (let i = 0; i < 20; i++) {
      const a = answers(await exchange(req("POST", `/threads/${id}/interrupt`, big(500_000))))[0]!;
      seen.push(`${a.status} ${a.json?.code}`);
    }
    expect(new Set(seen)).toEqual(new Set(["409 no-turn-running"]));

    expect((await only(req("POST", "/drain", '{"reason":"front-framing test"}'))).status).toBe(200);
    try {
      seen.length = 0;
      const message = big(5_000_000);
      for (let i = 0; i < 20; i++) {
        const a = answers(await exchange(req("POST", `/threads/${id}/messages`, message)))[0]!;
        seen.push(`${a.status} ${a.json?.code}`);
      }
      expect(new Set(seen)).toEqual(new Set(["503 draining"]));
    } finally {
      expect((await only(req("DELETE", "/drain"))).status).toBe(200);
    }
    // One line per 5xx it saw: status, method and path; never the body.
    const lines = front().output().split("\n").filter((l) => l.includes("workerd answered 503"));
    expect(lines).toHaveLength(20);
    expect(lines[0]).toContain(`status=503 method=POST path=/threads/${id}/messages`);
    expect(front().output()).not.toContain("xxxxxxxx");
    expect(front().output()).not.toContain("upstream-unavailable");
  });

  it("answers 408 to a head that trickles and to a body that stalls", async () => {
    const head = await only(`GET /health HTTP/1.1\r\nHost: ${host()}\r\nX-Slow: `, (s) => {
      const drip = setInterval(() => (s.destroyed ? clearInterval(drip) : s.write("a")), 100);
    });
    expectRefusal(head, 408, "request-timeout");
    const body = await only(`POST /spawn HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`);
    expectRefusal(body, 408, "request-timeout");
  });

  it("still serves ordinary requests, several on one connection", async () => {
    const keepAlive = `GET /health HTTP/1.1\r\nHost: ${host()}\r\n\r\n`;
    const all = answers(await exchange(keepAlive + keepAlive + req("GET", "/health")));
    expect(all.map((a) => [a.status, a.json.ok])).toEqual([[200, true], [200, true], [200, true]]);
  });
});
