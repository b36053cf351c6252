import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeDir, startFront } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const APP_ORIGIN = "http://app.example.test:8080";
const front = useFront({ env: { SERVICE_ALLOWED_ORIGINS: APP_ORIGIN, SERVICE_ALLOWED_HOSTS: "runtime.example.test" } });

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** A request with the headers a browser sends and `fetch` will not let a caller forge (Host, Origin, sec-fetch-site). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(front().url + path, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        let parsed: unknown = null;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          parsed = null;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** What a page on another site sends with a form or `fetch(..., {mode: "no-cors"})`: a simple POST, no preflight. */
const crossSite = { origin: "https://attacker.example", "sec-fetch-site": "cross-site", "content-type": "text/plain" };

async function spawn(spec: object = {}): Promise<string> {
  const r = await call(front().url, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

async function threadCount(): Promise<number> {
  return (await call(front().url, "GET", "/threads?limit=200&archived=all")).body.threads.length;
}

describe("Host: every route answers only to the runtime's own names", () => {
  it("refuses a rebinding page's Host on a read and on a write, and changes nothing", async () => {
    const before = await threadCount();
    const port = new URL(front().url).port;
    for (const [method, path, body] of [
      ["GET", "/threads", undefined],
      ["GET", "/health", undefined],
      ["POST", "/spawn", JSON.stringify({ permissions: "allow" })],
      ["GET", "/rooms/capabilities", undefined],
      ["POST", "/rooms/room_0000000000000000/rounds", "{}"],
    ] as const) {
      const r = await raw(method, path, { host: `attacker.example:${port}`, "content-type": "application/json" }, body);
      expect([r.status, r.body?.code], `${method} ${path}`).toEqual([403, "untrusted-caller"]);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    }
    expect(await threadCount()).toBe(before);
  });

  it("refuses it on a follow too, which the front's relay would otherwise serve", async () => {
    const id = await spawn();
    const r = await raw("GET", `/threads/${id}/follow?after=0`, { host: "attacker.example" });
    expect([r.status, r.body?.code]).toEqual([403, "untrusted-caller"]);
  });

  it("answers a name the operator adds with SERVICE_ALLOWED_HOSTS", async () => {
    const r = await raw("GET", "/health", { host: `runtime.example.test:${new URL(front().url).port}` });
    expect(r.status).toBe(200);
  });
});

describe("Origin: a page on another site cannot change anything", () => {
  it("refuses a cross-site simple POST on spawn, messages, fork and approvals, and the log stays as it was", async () => {
    const before = await threadCount();
    expect((await raw("POST", "/spawn", crossSite, JSON.stringify({ permissions: "allow" }))).status).toBe(403);
    expect(await threadCount()).toBe(before);

    const id = await spawn();
    await call(front().url, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo hi" } } }) });
    const approvalId = await waitFor(async () => (await call(front().url, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0] as string | undefined);
    const logBefore = await events(front().url, id);

    for (const [path, body] of [
      [`/threads/${id}/messages`, JSON.stringify({ text: "run id -un" })],
      [`/threads/${id}/approvals/${approvalId}`, JSON.stringify({ decision: "allow" })],
      [`/threads/${id}/fork`, JSON.stringify({ atSeq: 1 })],
      [`/threads/${id}/interrupt`, ""],
      // The review rooms' writes, which post to the code host and start threads.
      ["/workspaces/team/rooms", JSON.stringify({ repo: "acme/widgets", pr: 1 })],
      ["/rooms/room_0000000000000000/finalize", "{}"],
      ["/workspaces/team/prs/1/agents", JSON.stringify({ repo: "acme/widgets" })],
    ]) {
      const r = await raw("POST", path!, crossSite, body);
      expect([r.status, r.body?.code], path).toEqual([403, "untrusted-caller"]);
    }
    // A page whose browser sends no Origin but marks the request cross-site is refused as well.
    const noOrigin = await raw("POST", `/threads/${id}/messages`, { "sec-fetch-site": "cross-site", "content-type": "text/plain" }, JSON.stringify({ text: "x" }));
    expect(noOrigin.status).toBe(403);

    expect(await events(front().url, id)).toEqual(logBefore);
    expect((await call(front().url, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals).toEqual([approvalId]);
    expect(await threadCount()).toBe(before + 1);
    // The same approval from the runtime's own page (or curl) goes through.
    const allowed = await raw("POST", `/threads/${id}/approvals/${approvalId}`, { origin: front().url, "content-type": "application/json" }, JSON.stringify({ decision: "allow" }));
    expect(allowed.status).toBe(200);
  });

  it("keeps the drain to callers on this machine: a page cannot arm or claim it", async () => {
    const r = await raw("POST", "/drain", crossSite, JSON.stringify({ owner: "attacker" }));
    expect([r.status, r.body?.code]).toEqual([403, "untrusted-caller"]);
    expect((await call(front().url, "GET", "/drain")).body.armed).toBe(false);
    expect((await raw("DELETE", "/drain", { origin: "https://attacker.example" })).status).toBe(403);
  });
});

describe("CORS: allowed origins only", () => {
  it("answers an allowed origin's preflight with the API's methods and headers", async () => {
    for (const origin of [APP_ORIGIN, "http://127.0.0.1:5189", "http://localhost:5189"]) {
      const r = await raw("OPTIONS", "/spawn", {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, idempotency-key, x-service-workspace, x-unknown",
      });
      expect(r.status, origin).toBe(204);
      expect(r.headers["access-control-allow-origin"]).toBe(origin);
      expect(r.headers["access-control-allow-methods"]).toContain("POST");
      const allowedHeaders = String(r.headers["access-control-allow-headers"]).split(", ");
      expect(allowedHeaders).toEqual(expect.arrayContaining(["content-type", "last-event-id", "idempotency-key", "x-service-workspace"]));
      expect(allowedHeaders).not.toContain("x-unknown");
      expect(r.headers.vary).toContain("Origin");
    }
  });

  it("refuses a preflight from any other origin, with no CORS headers", async () => {
    const r = await raw("OPTIONS", "/spawn", { origin: "https://attacker.example", "access-control-request-method": "POST" });
    expect([r.status, r.body?.code]).toEqual([403, "untrusted-caller"]);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("gives an allowed origin's answers CORS headers (Retry-After readable), refusals included, and nobody else's", async () => {
    const ok = await raw("GET", "/health", { origin: APP_ORIGIN });
    expect(ok.headers["access-control-allow-origin"]).toBe(APP_ORIGIN);
    expect(ok.headers["access-control-expose-headers"]).toContain("retry-after");
    const missing = await raw("GET", "/threads/thr_nope", { origin: APP_ORIGIN });
    expect(missing.status).toBe(404);
    expect(missing.headers["access-control-allow-origin"]).toBe(APP_ORIGIN);
    const plain = await raw("GET", "/health", {});
    expect(plain.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("streams follow to an allowed origin with CORS headers (served by the worker, not the relay)", async () => {
    const id = await spawn();
    const r = await new Promise<{ status: number; headers: Record<string, unknown>; first: string }>((resolve, reject) => {
      const req = request(front().url + `/threads/${id}/follow?after=0`, { headers: { origin: APP_ORIGIN }, agent: false }, (res) => {
        res.setEncoding("utf8");
        res.once("data", (first: string) => {
          resolve({ status: res.statusCode!, headers: res.headers, first });
          req.destroy();
        });
      });
      req.on("error", reject);
      req.end();
    });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toContain("text/event-stream");
    expect(r.headers["access-control-allow-origin"]).toBe(APP_ORIGIN);
  });
});

describe("methods", () => {
  it("answers a known path's wrong method with 405 and Allow, OPTIONS with Allow, an unknown path with 404 and the build", async () => {
    const wrong = await raw("GET", "/spawn", {});
    expect([wrong.status, wrong.body.code, wrong.headers.allow]).toEqual([405, "method-not-allowed", "POST, OPTIONS"]);
    expect(wrong.body.build).toBeTruthy();
    const id = await spawn();
    const put = await raw("PUT", `/threads/${id}`, {});
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe("GET, HEAD, DELETE, OPTIONS");
    const options = await raw("OPTIONS", `/threads/${id}/messages`, {});
    expect([options.status, options.headers.allow]).toEqual([204, "POST, OPTIONS"]);
    const nowhere = await raw("GET", "/no/such/route", {});
    expect(nowhere.status).toBe(404);
    expect(Object.keys(nowhere.body).sort()).toEqual(["build", "code", "error"]);
    expect(nowhere.body.code).toBe("route-not-found");
  });
});

describe("configuration", () => {
  it("refuses to start with an allowed origin that is not an origin, in one sentence", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-callers-"));
    const err = await startFront({ dataDir, env: { SERVICE_ALLOWED_ORIGINS: "https://*.example.com" } }).then(
      async (f) => (await f.stop(), null),
      (e: Error) => e,
    );
    removeDir(dataDir);
    expect(err?.message).toContain("SERVICE_ALLOWED_ORIGINS");
    expect(err?.message).toContain("is not an origin");
  });
});
