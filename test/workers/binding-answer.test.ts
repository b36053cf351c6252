import { describe, expect, it } from "vitest";
import { callEngine } from "../../src/platform/engine-call.js";
import { accountPool } from "../../src/platform/account-pool.js";
import { codeBody } from "../../src/platform/code-call.js";
import type { Env } from "../../src/platform/env.js";

/** What plain `wrangler dev` answers for a service binding whose service nobody runs (wrangler 4.86). */
const notRunning = (service: string) => () =>
  new Response(`Worker "${service}" not found. Make sure it is running locally.`, { status: 503, headers: { "content-type": "application/json" } });

const env = (engines: () => Response, accounts: () => Response) =>
  ({ ENGINES: { fetch: async () => engines() }, ACCOUNTS: { fetch: async () => accounts() } }) as unknown as Env;

describe("a binding with no service behind it (plain wrangler dev)", () => {
  const unconnected = env(notRunning("agent-engines"), notRunning("agent-accounts"));

  it("fails a turn as engine-unavailable and says to run npm start", async () => {
    const res = await callEngine(unconnected, "/turns", {});
    expect(res.status).toBe(503);
    const body = (await res.json()) as { class: string; error: string };
    expect(body.class).toBe("engine-unavailable");
    expect(body.error).toMatch(/^the engine host is not connected: .*wrangler dev.*`npm start`/);
  });

  it("refuses account pool calls with JSON account-pool-unavailable", async () => {
    const res = await accountPool(unconnected, "/models");
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/^the account pool is not connected: .*`npm start`/), code: "account-pool-unavailable" });
  });
});

describe("a binding with its service behind it", () => {
  it("passes the service's own answers on, refusals included", async () => {
    const served = env(
      () => Response.json({ class: "engine-unavailable", error: "engine_b is not available: not installed" }, { status: 503 }),
      () => Response.json({ error: "the account pool answers the runtime's worker only" }, { status: 403 }),
    );
    const engine = await callEngine(served, "/turns", {});
    expect([engine.status, await engine.json()]).toEqual([503, { class: "engine-unavailable", error: "engine_b is not available: not installed" }]);
    const pool = await accountPool(served, "/models");
    expect([pool.status, await pool.json()]).toEqual([403, { error: "the account pool answers the runtime's worker only" }]);
    const streamed = await callEngine(env(() => new Response('{"type":"ping"}\n'), notRunning("x")), "/turns", {});
    expect(await streamed.text()).toBe('{"type":"ping"}\n');
  });
});

describe("the code service's answers", () => {
  const code = (answer: () => Response) => ({ CODE: { fetch: async () => answer() }, SERVICE_CODE_TOKEN: "t" }) as unknown as Env;

  it("stream to the caller as the service wrote them, not parsed and written again", async () => {
    // Written again, 1.50 would come out 1.5 and the spaces would go: the bytes are the service's.
    const written = '{"symbols": [{"line": 1.50}], "truncated": false}';
    const answer = await codeBody(code(() => new Response(written, { headers: { "content-type": "application/json" } })), "GET", "/outline", { root: "app", path: "a.ts" });
    expect(answer.ok && (await answer.value.text())).toBe(written);
  });

  it("keep the service's refusals, and say how to run with a service when there is none", async () => {
    const refused = await codeBody(code(() => Response.json({ error: "no code root x", code: "code-root-not-found", roots: ["app"] }, { status: 404 })), "GET", "/outline", { root: "x", path: "a.ts" });
    expect(refused).toEqual({ ok: false, status: 404, body: { error: "no code root x", code: "code-root-not-found", roots: ["app"] } });
    const missing = await codeBody(code(notRunning("agent-code")), "GET", "/outline", { root: "app", path: "a.ts" });
    expect(missing.ok || [missing.status, missing.body.code]).toEqual([503, "code-service-unavailable"]);
  });
});
