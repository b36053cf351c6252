import { describe, expect, it } from "vitest";
import { CallerPolicyError, judgeCaller, notLocalCaller, readCallerPolicy, untrustedHost } from "../../src/rules/caller-policy.js";
import { allowedMethods } from "../../src/http/allowed-methods.js";

const none = readCallerPolicy(undefined, undefined);
const judge = (method: string, headers: Record<string, string>, policy = none) => judgeCaller(method, new Headers(headers), policy);

describe("which Host names the runtime", () => {
  it("takes the loopback names at any port, and nothing else unless the operator adds it", () => {
    for (const host of ["127.0.0.1:4741", "127.9.9.9", "localhost:4741", "LOCALHOST", "[::1]:4741", "localhost."]) expect(untrustedHost(host, none), host).toBeNull();
    for (const host of ["attacker.example:4741", "127.0.0.1.attacker.example", "localhost.attacker.example", "0.0.0.0:4741", "10.0.0.1", "evil.localhost", "", "a b", "127.0.0.1:4741/x"])
      expect(untrustedHost(host, none), host).not.toBeNull();
    expect(untrustedHost(null, none)).toContain("no Host");
    const policy = readCallerPolicy("runtime.internal, box.lan:8443", undefined);
    expect(untrustedHost("runtime.internal:9999", policy)).toBeNull();
    expect(untrustedHost("box.lan:8443", policy)).toBeNull();
    expect(untrustedHost("box.lan:8444", policy)).not.toBeNull();
  });
});

describe("which browser origins may call", () => {
  it("allows the runtime's own origin under any loopback name, and the application server's", () => {
    for (const origin of ["http://127.0.0.1:4741", "http://localhost:4741", "http://[::1]:4741", "http://127.0.0.1:5189", "http://localhost:5189"])
      expect(judge("POST", { host: "127.0.0.1:4741", origin }), origin).toEqual({ ok: true, corsOrigin: origin });
  });

  it("refuses every other origin on every method, `null` included", () => {
    for (const origin of ["https://attacker.example", "http://localhost:8080", "http://127.0.0.1:5190", "https://127.0.0.1:4741", "null", "file://", "not an origin"])
      for (const method of ["POST", "GET", "DELETE"]) expect(judge(method, { host: "127.0.0.1:4741", origin }).ok, `${method} ${origin}`).toBe(false);
  });

  it("refuses a state change the browser marks as another site's when it names no allowed origin; reads and same-origin pass", () => {
    expect(judge("POST", { host: "127.0.0.1:4741", "sec-fetch-site": "cross-site" }).ok).toBe(false);
    expect(judge("PUT", { host: "127.0.0.1:4741", "sec-fetch-site": "same-site" }).ok).toBe(false);
    expect(judge("POST", { host: "127.0.0.1:4741", "sec-fetch-site": "same-origin" }).ok).toBe(true);
    expect(judge("POST", { host: "127.0.0.1:4741", "sec-fetch-site": "none" }).ok).toBe(true);
    expect(judge("GET", { host: "127.0.0.1:4741", "sec-fetch-site": "cross-site" }).ok).toBe(true);
    expect(judge("POST", { host: "127.0.0.1:4741" })).toEqual({ ok: true, corsOrigin: null });
  });

  it("adds the operator's origins, and refuses a value that is not an origin at start", () => {
    const policy = readCallerPolicy(undefined, "https://app.example.com, http://127.0.0.1:3000/");
    expect(judge("POST", { host: "127.0.0.1:4741", origin: "https://app.example.com" }, policy).ok).toBe(true);
    expect(judge("POST", { host: "127.0.0.1:4741", origin: "http://127.0.0.1:3000" }, policy).ok).toBe(true);
    expect(judge("POST", { host: "127.0.0.1:4741", origin: "https://app.example.com.evil" }, policy).ok).toBe(false);
    for (const bad of ["*", "https://*.example.com", "https://app.example.com/path", "app.example.com", "ftp://x"])
      expect(() => readCallerPolicy(undefined, bad), bad).toThrow(CallerPolicyError);
    expect(() => readCallerPolicy("a/b", undefined)).toThrow(CallerPolicyError);
  });
});

describe("who is a local caller, for the routes that reset what an account spends", () => {
  const local = (headers: Record<string, string>) => notLocalCaller(new Headers(headers));

  it("is a program on this machine: a loopback Host at any port, no browser header", () => {
    for (const host of ["127.0.0.1:4741", "localhost:4741", "[::1]:4741", "127.0.0.2", "LOCALHOST."]) expect(local({ host }), host).toBeNull();
  });

  it("is not a Host the operator allowed: the caller gate lets it in, the local rule does not", () => {
    const policy = readCallerPolicy("runtime.internal, box.lan:8443", undefined);
    for (const host of ["runtime.internal:4741", "box.lan:8443"]) {
      expect(judge("POST", { host }, policy).ok, host).toBe(true);
      expect(local({ host }), host).toContain("not a loopback name");
    }
    for (const host of ["attacker.example", "0.0.0.0:4741", "localhost.attacker.example", "", "a b"]) expect(local({ host }), host).toContain("not a loopback name");
    expect(local({})).toContain("not a loopback name");
  });

  it("is never a browser page, even from an origin every other route allows", () => {
    for (const origin of ["http://127.0.0.1:4741", "http://127.0.0.1:5189", "null"]) {
      expect(local({ host: "127.0.0.1:4741", origin }), origin).toContain("browser page");
    }
    expect(judge("POST", { host: "127.0.0.1:4741", origin: "http://127.0.0.1:5189" }).ok).toBe(true);
    for (const site of ["same-origin", "none", "cross-site"]) expect(local({ host: "127.0.0.1:4741", "sec-fetch-site": site }), site).toContain("browser");
  });
});

describe("which methods a path serves", () => {
  const methodsOf = allowedMethods([
    { method: "ALL", path: "/*" },
    { method: "GET", path: "/threads/:id" },
    { method: "DELETE", path: "/threads/:id" },
    { method: "POST", path: "/threads/:id/messages" },
    { method: "PATCH", path: "/threads/:id/messages/:seq" },
  ]);
  it("lists them with HEAD beside GET and OPTIONS always, and none for a path no route claims", () => {
    expect(methodsOf("/threads/t1")).toEqual(["GET", "HEAD", "DELETE", "OPTIONS"]);
    expect(methodsOf("/threads/t1/messages")).toEqual(["POST", "OPTIONS"]);
    expect(methodsOf("/threads/t1/messages/4")).toEqual(["PATCH", "OPTIONS"]);
    expect(methodsOf("/threads/t1/")).toEqual([]);
    expect(methodsOf("/nothing")).toEqual([]);
  });
});
