import { describe, expect, it } from "vitest";
import { parseFollowRequest } from "../../local-front/front/follow-relay.js";
import { readHead, type Head } from "../../local-front/front/http-framing.js";

const ID = "thr_01m81kt70y1m1zf7shrrwmfw6s";
const head = (line: string, ...headers: string[]) => readHead(Buffer.from([line, "Host: 127.0.0.1", ...headers, "", ""].join("\r\n"))) as Head;

describe("which requests the front's follow relay takes", () => {
  it("takes a follow GET, with its cursor from Last-Event-ID, then after, then 0", () => {
    expect(parseFollowRequest(head(`GET /threads/${ID}/follow HTTP/1.1`))).toEqual({ threadId: ID, after: 0, host: "127.0.0.1" });
    expect(parseFollowRequest(head(`GET /threads/${ID}/follow?after=12 HTTP/1.1`))).toEqual({ threadId: ID, after: 12, host: "127.0.0.1" });
    expect(parseFollowRequest(head(`GET /threads/${ID}/follow?after=12 HTTP/1.1`, "Last-Event-ID: 40"))).toEqual({ threadId: ID, after: 40, host: "127.0.0.1" });
  });

  it("leaves everything else to the worker", () => {
    for (const h of [
      head(`POST /threads/${ID}/follow HTTP/1.1`),
      head(`GET /threads/${ID}/stream HTTP/1.1`),
      head(`GET /threads/${ID}/follow?after=-1 HTTP/1.1`),
      head(`GET /threads/${ID}/follow HTTP/1.1`, "Last-Event-ID: x"),
      head(`GET /threads/${ID}/follow HTTP/1.1`, "Content-Length: 5"),
      head(`GET /threads/${ID}/follow HTTP/1.1`, "Upgrade: websocket"),
      head(`GET /threads/${ID}/follow HTTP/1.1`, "Origin: http://127.0.0.1:5189"),
      head(`GET /threads/nope/follow HTTP/1.1`),
      head("GET /health HTTP/1.1"),
    ])
      expect(parseFollowRequest(h), h.startLine.join(" ")).toBeNull();
  });
});
