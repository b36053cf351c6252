import { describe, expect, it } from "vitest";
import {
  ChunkedScanner,
  BodyCounter,
  readHead,
  readRequest,
  refusalBytes,
  requestBody,
  responseFraming,
  type Head,
  type Refusal,
  type RequestHead,
} from "../../local-front/front/http-framing.js";

const b = (s: string) => Buffer.from(s, "latin1");
const head = (s: string) => readHead(b(s)) as Head;
/** What the front makes of a whole request head. */
const judge = (s: string): RequestHead | Refusal | null => {
  const h = readHead(b(s));
  return h === null || "status" in h ? h : readRequest(h);
};
const refusalOf = (s: string) => {
  const r = judge(s);
  return r !== null && "status" in r ? [r.status, r.code] : "forwarded";
};

describe("the front's HTTP framing", () => {
  it("reads a head only once it is whole, and picks up where it left off", () => {
    expect(readHead(b("POST /x HTTP/1.1\r\nContent-Length: 3\r\n"))).toBeNull();
    const whole = b("POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
    const h = readHead(whole) as Head;
    expect([h.length, h.startLine, h.headers.get("content-length")]).toEqual([39, ["POST", "/x", "HTTP/1.1"], "3"]);
    // The end of the head found across the boundary of what was scanned before.
    expect((readHead(whole, 36) as Head).length).toBe(39);
  });

  it("forwards ordinary requests", () => {
    for (const ok of [
      "GET /threads HTTP/1.1\r\nHost: 127.0.0.1:4741\r\n\r\n",
      "GET /threads/thr_1/tail?after=..&q=%2e%2e%2F&pct=100% HTTP/1.1\r\nHost: localhost\r\n\r\n",
      "POST /spawn HTTP/1.1\r\nHost: [::1]:4741\r\nContent-Length: 2\r\n\r\n",
      "POST /spawn HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n",
      "GET /health HTTP/1.0\r\nHost: x\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n",
      "OPTIONS /threads HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Tab: a\tb\r\n\r\n",
    ])
      expect(refusalOf(ok), ok).toBe("forwarded");
    expect(judge("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")).toMatchObject({ method: "POST", target: "/x", framing: { kind: "none" }, closes: false });
    expect(judge("GET /x HTTP/1.0\r\nHost: x\r\n\r\n")).toMatchObject({ closes: true });
    expect(judge("GET /x HTTP/1.1\r\nHost: x\r\nConnection: te, close\r\n\r\n")).toMatchObject({ closes: true });
  });

  it("refuses what two parsers could frame two ways, with 400 bad-request-framing", () => {
    const cases = [
      // Lengths and codings.
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1,1\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999999999999\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
      // Host.
      "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
      "GET / HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.0\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: \r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a@b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
      // Start line and targets.
      "GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET x:80 HTTP/1.1\r\nHost: x\r\n\r\n",
      "CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n",
      "CONNECT /x HTTP/1.1\r\nHost: x\r\n\r\n",
      "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET health HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET / HTTP/1.1 \r\nHost: x\r\n\r\n",
      "GET /\r\nHost: x\r\n\r\n",
      "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
      "GET / http/1.1\r\nHost: x\r\n\r\n",
      "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
      "garbage\r\n\r\n",
      "GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /\xe9 HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n",
      // Dot segments and separators, written or encoded.
      "GET /threads/../accounts HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /./health HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /threads/.. HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /accounts/%2e%2e/access-token HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /accounts/%2E./access-token HTTP/1.1\r\nHost: x\r\n\r\n",
      "POST /accounts/.%2e/access-token HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /threads/%2e HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /threads%2Fthr_1 HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /threads%5cthr_1 HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /threads\\..\\x HTTP/1.1\r\nHost: x\r\n\r\n",
      // Header lines.
      "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\n: empty name\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
      // Bare LF, whole or in one line.
      "GET / HTTP/1.1\nHost: x\n\n",
      "GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
    ];
    for (const c of cases) expect(refusalOf(c), JSON.stringify(c)).toEqual([400, "bad-request-framing"]);
  });

  it("refuses a bare LF and an oversized head before the head is whole", () => {
    expect(readHead(b("GET / HTTP/1.1\nHost"))).toMatchObject({ status: 400, code: "bad-request-framing" });
    expect(readHead(b("\nGET"))).toMatchObject({ status: 400 });
    expect(readHead(Buffer.alloc(70 * 1024, 65))).toMatchObject({ status: 431, code: "head-too-large" });
    const long = `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`;
    expect(refusalOf(long)).toEqual([431, "head-too-large"]);
  });

  it("answers methods no route uses with 501, naming the methods the API uses", () => {
    for (const m of ["FOO", "M-SEARCH", "TRACE", "PROPFIND"]) expect(refusalOf(`${m} / HTTP/1.1\r\nHost: x\r\n\r\n`)).toEqual([501, "method-not-implemented"]);
    const lower = judge("get / HTTP/1.1\r\nHost: x\r\n\r\n") as Refusal;
    expect(lower).toMatchObject({ status: 501, code: "method-not-implemented" });
    expect(lower.error).toContain("case-sensitive: GET");
    expect(lower.error).toContain("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
  });

  it("writes a refusal as a whole JSON answer that closes the connection", () => {
    const text = refusalBytes({ status: 501, code: "method-not-implemented", error: "FOO is not a method" }, "FOO").toString("latin1");
    const [top, body] = text.split("\r\n\r\n") as [string, string];
    expect(top).toMatch(/^HTTP\/1.1 501 Not Implemented\r\n/);
    expect(top).toContain("content-type: application/json");
    expect(top).toContain("connection: close");
    expect(top).toContain("allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    expect(top).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(JSON.parse(body)).toEqual({ error: "FOO is not a method", code: "method-not-implemented" });
  });

  it("leaves the body out of a refusal of a HEAD, keeping its length", () => {
    const text = refusalBytes({ status: 400, code: "bad-request-framing", error: "a dotted path" }, "HEAD").toString("latin1");
    const [top, body] = text.split("\r\n\r\n") as [string, string];
    expect(body).toBe("");
    expect(top).toContain(`content-length: ${Buffer.byteLength(JSON.stringify({ error: "a dotted path", code: "bad-request-framing" }))}`);
  });

  it("knows which responses have no body", () => {
    expect(responseFraming(head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), "HEAD")).toEqual({ kind: "none" });
    expect(responseFraming(head("HTTP/1.1 204 No Content\r\n\r\n"), "GET")).toEqual({ kind: "none" });
    expect(responseFraming(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), "GET")).toEqual({ kind: "chunked" });
    expect(responseFraming(head("HTTP/1.1 200 OK\r\n\r\n"), "GET")).toEqual({ kind: "close" });
    expect(responseFraming(head("HTTP/1.1 202 Accepted\r\nContent-Length: 40\r\n\r\n"), "POST")).toEqual({ kind: "length", remaining: 40 });
  });

  it("re-frames a chunked request body without extensions or trailers, however its bytes are split", () => {
    const body = b("5;ext=1\r\nhello\r\n0003 ; a=b;c\r\nabc\r\n0;last=1\r\nTrailer-One: x\r\nTrailer-Two: y\r\n\r\n");
    for (let step = 1; step <= body.length; step++) {
      const reader = requestBody({ kind: "chunked" })!;
      const out: Buffer[] = [];
      let taken = 0;
      for (let i = 0; i < body.length && !reader.done; i += step) {
        const n = reader.forward(body.subarray(i, Math.min(body.length, i + step)), out);
        expect(typeof n, `step ${step}`).toBe("number");
        taken += n as number;
      }
      expect(reader.done, `step ${step}`).toBe(true);
      expect(taken).toBe(body.length);
      expect(Buffer.concat(out).toString("latin1")).toBe("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n");
    }
    const rest = requestBody({ kind: "chunked" })!;
    expect(rest.forward(b("0\r\n\r\nGET / HTTP/1.1\r\n"), [])).toBe(5);
  });

  it("refuses a chunked body it cannot count", () => {
    const refused = (s: string) => {
      const r = requestBody({ kind: "chunked" })!.forward(b(s), []);
      return typeof r === "number" ? r : [r.status, r.code];
    };
    for (const bad of [
      "zz\r\n",
      "-1\r\n",
      " 5\r\nhello\r\n",
      "0x5\r\nhello\r\n",
      "ffffffffffffffffffff\r\n",
      "10000000000000\r\n",
      "5\r\nhelloXX",
      "5\nhello\r\n",
      "5\r\nhello\r\n0\r\nT: x\n\r\n",
      `${"5".padStart(5000, "0")}`,
    ])
      expect(refused(bad), JSON.stringify(bad.slice(0, 40))).toEqual([400, "bad-request-framing"]);
    // Leading zeros are digits like any other: the size stays small.
    const zeros = "00000000000000000005\r\nhello\r\n0\r\n\r\n";
    expect(refused(zeros)).toBe(zeros.length);
  });

  it("forwards a body of known length as it came and stops at its end", () => {
    const reader = requestBody({ kind: "length", remaining: 4 })!;
    const out: Buffer[] = [];
    const first = b("ab");
    expect(reader.forward(first, out)).toBe(2);
    expect(out[0]).toBe(first);
    expect(reader.done).toBe(false);
    expect(reader.forward(b("cdEXTRA"), out)).toBe(2);
    expect(reader.done).toBe(true);
    expect(Buffer.concat(out).toString()).toBe("abcd");
    expect(requestBody({ kind: "none" })).toBeNull();
  });

  it("finds the end of a chunked response however its bytes are split", () => {
    const body = b("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n");
    for (let step = 1; step <= body.length; step++) {
      const counter = new BodyCounter({ kind: "chunked" });
      let taken = 0;
      for (let i = 0; i < body.length && !counter.done; i += step) taken += counter.feed(body.subarray(i, Math.min(body.length, i + step)));
      expect(counter.done, `step ${step}`).toBe(true);
      expect(taken).toBe(body.length);
    }
    expect(new ChunkedScanner().feed(b("0\r\n\r\nHTTP/1.1 200 OK\r\n"))).toBe(5);
    expect(new ChunkedScanner().feed(b("zz\r\n"))).toBe(-1);
  });
});
