import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { CODES } from "../../src/api/errors.js";
import { ok, refuse } from "../../src/api/outcome.js";
import { holdsToken, invalid, newToken, readJson, segment, serveBinding, type BindingServer } from "../../local-front/bindings/http.js";
import { issuesSentence } from "../../src/shared/issues.js";

class Owned extends Error {}

const Body = z.object({ name: z.string().min(1), count: z.number().int() }).strict();
const TOKEN = "a".repeat(48);
const HEADER = "x-test-token";

let server: BindingServer;
beforeAll(async () => {
  server = await serveBinding({ name: "the test binding", gate: { header: HEADER, token: TOKEN }, refusalOf: (err) => (err instanceof Owned ? refuse(503, err.message, CODES.codeGitFailed) : null) }, async (req, res, url) => {
    if (url.pathname === "/echo") {
      const body = Body.safeParse(await readJson(req));
      return body.success ? ok(body.data) : invalid(body.error);
    }
    if (url.pathname.startsWith("/named/")) return ok({ name: segment(url.pathname.slice("/named/".length)) });
    if (url.pathname === "/boom") throw new TypeError("x is undefined");
    if (url.pathname === "/owned") throw new Owned("git could not answer");
    if (url.pathname === "/stream") {
      res.writeHead(200, { "content-type": "text/plain" }).end("written by the route");
      return;
    }
    return refuse(404, `no route ${url.pathname}`, CODES.routeNotFound);
  });
});
afterAll(() => server.close());

const ask = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
  const { token = TOKEN, ...rest } = init;
  const res = await fetch(`http://${server.address}${path}`, { ...rest, headers: token === null ? {} : { [HEADER]: token } });
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.text()) as string };
};
const json = (a: { body: string }) => JSON.parse(a.body) as { error: string; code: string };

describe("the bindings' server helper", () => {
  it("answers only who holds the token, in constant time, with internal-only", async () => {
    for (const token of [null, "", "a".repeat(47), "b".repeat(48), `${TOKEN}a`]) {
      const a = await ask("/echo", { method: "POST", body: "{}", token });
      expect(a.status, String(token)).toBe(403);
      expect(json(a)).toMatchObject({ code: CODES.internalOnly, error: "the test binding answers the runtime's worker only" });
    }
    expect(holdsToken(TOKEN, TOKEN)).toBe(true);
    expect(holdsToken([TOKEN], TOKEN)).toBe(false);
    expect(holdsToken(undefined, TOKEN)).toBe(false);
    // A binding whose token was never set answers nobody, not everybody.
    expect(holdsToken("", "")).toBe(false);
  });

  it("refuses a body that is not JSON as 400 invalid-body, never a 500", async () => {
    const a = await ask("/echo", { method: "POST", body: "{nope" });
    expect(a.status).toBe(400);
    expect(json(a)).toMatchObject({ code: CODES.invalidBody, error: expect.stringContaining("the body is not JSON") });
  });

  it("says zod's issues in one sentence, each with its place", async () => {
    const a = await ask("/echo", { method: "POST", body: JSON.stringify({ name: "", count: 1.5, extra: true }) });
    expect(a.status).toBe(400);
    const body = json(a);
    expect(body.code).toBe(CODES.invalidBody);
    for (const place of [/(^|; )name: /, /(^|; )count: /, /(^|; )body: [^;]*extra/]) expect(body.error).toMatch(place);
    expect(issuesSentence({ issues: [{ path: [], message: "not an object" }] }, "(file)")).toBe("(file): not an object");
    expect(issuesSentence({ issues: [{ path: ["a", 0, "b"], message: "bad" }] })).toBe("a.0.b: bad");
  });

  it("answers the value of a route that takes the request", async () => {
    const a = await ask("/echo", { method: "POST", body: JSON.stringify({ name: "n", count: 2 }) });
    expect(a.status).toBe(200);
    expect(a.type).toBe("application/json");
    expect(JSON.parse(a.body)).toEqual({ name: "n", count: 2 });
    expect(JSON.parse((await ask("/named/a%2Fb")).body)).toEqual({ name: "a/b" });
    expect(await ask("/stream")).toMatchObject({ status: 200, body: "written by the route" });
  });

  it("refuses a malformed path escape as invalid-param", async () => {
    const a = await ask("/named/%E0%A4%A");
    expect(a.status).toBe(400);
    expect(json(a).code).toBe(CODES.invalidParam);
  });

  it("answers a fault as a coded 500 that names the binding, and a fault of its own as its refusal", async () => {
    const a = await ask("/boom");
    expect(a.status).toBe(500);
    expect(json(a)).toEqual({ error: "the test binding failed: x is undefined", code: CODES.bindingFailed });
    const b = await ask("/owned");
    expect(b.status).toBe(503);
    expect(json(b)).toEqual({ error: "git could not answer", code: CODES.codeGitFailed });
  });

  it("makes tokens of 24 random bytes", () => {
    const a = newToken();
    expect(a).toMatch(/^[0-9a-f]{48}$/);
    expect(newToken()).not.toBe(a);
  });
});
