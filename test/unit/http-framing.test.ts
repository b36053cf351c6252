import { describe, expect, it } from "vitest";
import { BodyCounter, ChunkedScanner, readHead, requestFraming, responseFraming } from "../../local-front/http-framing.js";

const b = (s: string) => Buffer.from(s, "latin1");

describe("the front's HTTP framing", () => {
  it("reads a head only once it is whole", () => {
    expect(readHead(b("POST /x HTTP/1.1\r\nContent-Length: 3\r\n"))).toBeNull();
    const head = readHead(b("POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"));
    expect(head).not.toBe("bad");
    expect(head && head !== "bad" && [head.length, head.startLine, head.headers.get("content-length")]).toEqual([39, ["POST", "/x", "HTTP/1.1"], "3"]);
  });

  it("refuses what it cannot frame safely", () => {
    expect(readHead(b("garbage\r\n\r\n"))).toBe("bad");
    expect(readHead(b("GET / HTTP/1.1\r\nno colon here\r\n\r\n"))).toBe("bad");
    expect(readHead(b("GET / HTTP/1.1\r\nContent-Length : 5\r\n\r\n"))).toBe("bad");
    expect(readHead(b("GET / HTTP/1.1\nHost: x\n\n"))).toBe("bad");
    expect(readHead(b("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"))).toBe("bad");
    expect(readHead(Buffer.alloc(70 * 1024, 65))).toBe("bad");
    const both = readHead(b("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"));
    expect(both !== null && both !== "bad" && requestFraming(both)).toBe("bad");
    const negative = readHead(b("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"));
    expect(negative !== null && negative !== "bad" && requestFraming(negative)).toBe("bad");
  });

  it("knows which responses have no body", () => {
    const h = (s: string) => readHead(b(s)) as Exclude<ReturnType<typeof readHead>, null | "bad">;
    expect(responseFraming(h("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), "HEAD")).toEqual({ kind: "none" });
    expect(responseFraming(h("HTTP/1.1 204 No Content\r\n\r\n"), "GET")).toEqual({ kind: "none" });
    expect(responseFraming(h("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), "GET")).toEqual({ kind: "chunked" });
    expect(responseFraming(h("HTTP/1.1 200 OK\r\n\r\n"), "GET")).toEqual({ kind: "close" });
    expect(responseFraming(h("HTTP/1.1 202 Accepted\r\nContent-Length: 40\r\n\r\n"), "POST")).toEqual({ kind: "length", remaining: 40 });
  });

  it("finds the end of a chunked body however its bytes are split", () => {
    const body = b("5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n");
    for (let step = 1; step <= body.length; step++) {
      const scanner = new ChunkedScanner();
      let taken = 0;
      for (let i = 0; i < body.length && !scanner.done; i += step) taken += scanner.feed(body.subarray(i, Math.min(body.length, i + step)));
      expect(scanner.done, `step ${step}`).toBe(true);
      expect(taken).toBe(body.length);
    }
    const rest = new ChunkedScanner();
    expect(rest.feed(b("0\r\n\r\nGET / HTTP/1.1\r\n"))).toBe(5);
    expect(new ChunkedScanner().feed(b("zz\r\n"))).toBe(-1);
  });

  it("counts a body of known length and stops at its end", () => {
    const counter = new BodyCounter({ kind: "length", remaining: 4 });
    expect(counter.feed(b("ab"))).toBe(2);
    expect(counter.done).toBe(false);
    expect(counter.feed(b("cdEXTRA"))).toBe(2);
    expect(counter.done).toBe(true);
  });
});
