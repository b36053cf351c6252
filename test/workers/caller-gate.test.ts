import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("the caller gate in the worker (as on Cloudflare, without the front)", () => {
  it("judges a call with no Host header (a service binding) by its URL's host", async () => {
    expect((await SELF.fetch("https://runtime/health")).status).toBe(200);
    const stranger = await SELF.fetch("https://stranger.example/health");
    expect(stranger.status).toBe(403);
    expect(await stranger.json()).toMatchObject({ code: "untrusted-caller" });
  });

  it("refuses a foreign Host and a foreign Origin before any route runs", async () => {
    const rebound = await SELF.fetch("https://runtime/spawn", { method: "POST", headers: { host: "attacker.example" }, body: "{}" });
    expect(rebound.status).toBe(403);
    const crossSite = await SELF.fetch("https://runtime/spawn", { method: "POST", headers: { origin: "https://attacker.example", "content-type": "text/plain" }, body: "{}" });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers an allowed origin's preflight and its stream with CORS headers", async () => {
    const preflight = await SELF.fetch("https://runtime/spawn", { method: "OPTIONS", headers: { origin: "http://localhost:5189", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:5189");
    const client = new AbortController();
    const feed = await SELF.fetch("https://runtime/workspaces/default/events", { headers: { origin: "http://localhost:5189" }, signal: client.signal });
    expect(feed.headers.get("content-type")).toContain("text/event-stream");
    expect(feed.headers.get("access-control-allow-origin")).toBe("http://localhost:5189");
    client.abort();
  });
});
