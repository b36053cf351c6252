import { request } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { PROTOCOLS, parseSse, post, requestBody, type ProtocolName } from "./support.js";

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const NAMES = Object.keys(PROTOCOLS) as ProtocolName[];

function send(protocol: ProtocolName, text: string, extra: Record<string, unknown> = {}) {
  const { path, auth } = PROTOCOLS[protocol];
  return post(sim.url, path, requestBody(protocol, text, extra), auth);
}

const OPENAI_FAILS = {
  quota: { status: 429, type: "insufficient_quota", code: "insufficient_quota", message: /^You exceeded your current quota/ },
  auth: { status: 401, type: "invalid_request_error", code: "invalid_api_key", message: /Incorrect API key/ },
  "model-not-found": { status: 404, type: "invalid_request_error", code: "model_not_found", message: /^The model `sim-1` does not exist or you do not have access to it\.$/ },
  "unsupported-model": { status: 400, type: "invalid_request_error", code: "unsupported_model", message: /not supported for this account/ },
  "rate-limit": { status: 429, type: "requests", code: "rate_limit_exceeded", message: /^Rate limit reached/ },
  server: { status: 500, type: "server_error", code: "server_error", message: /server had an error/ },
};

const ANTHROPIC_FAILS = {
  quota: { status: 400, type: "invalid_request_error", message: /^Your credit balance is too low to access the Anthropic API/ },
  auth: { status: 401, type: "authentication_error", message: /x-api-key/ },
  "model-not-found": { status: 404, type: "not_found_error", message: /^model: claude-sim$/ },
  "unsupported-model": { status: 403, type: "permission_error", message: /not supported for this account/ },
  "rate-limit": { status: 429, type: "rate_limit_error", message: /rate limit/ },
  server: { status: 500, type: "api_error", message: /^Internal server error$/ },
};

describe("scripted failures in each protocol's real shape", () => {
  for (const protocol of ["openai-chat", "openai-responses"] as const) {
    it.each(Object.entries(OPENAI_FAILS))(`${protocol}: %s`, async (fail, want) => {
      for (const stream of [true, false]) {
        const res = await send(protocol, `@sim {"fail":"${fail}"}`, { stream });
        expect(res.status).toBe(want.status);
        expect(res.headers.get("content-type")).toBe("application/json");
        const { error } = res.json();
        expect(error).toEqual({ message: expect.stringMatching(want.message), type: want.type, param: null, code: want.code });
        expect(res.headers.get("retry-after")).toBe(fail === "rate-limit" ? "1" : null);
      }
    });
  }

  it.each(Object.entries(ANTHROPIC_FAILS))("anthropic-messages: %s", async (fail, want) => {
    const res = await send("anthropic-messages", `@sim {"fail":"${fail}"}`, { stream: true });
    expect(res.status).toBe(want.status);
    expect(res.json()).toEqual({ type: "error", error: { type: want.type, message: expect.stringMatching(want.message) } });
    expect(res.headers.get("retry-after")).toBe(fail === "rate-limit" ? "1" : null);
  });

  it.each(NAMES)("%s: retryAfter sets the retry-after header", async (protocol) => {
    const res = await send(protocol, '@sim {"fail":"rate-limit","retryAfter":17}');
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("17");
  });

  it.each(NAMES)("%s: the failure applies to the first step only", async (protocol) => {
    const directive = '@sim {"fail":"server","tool":{"name":"t","input":{}}}';
    expect((await send(protocol, directive)).status).toBe(500);
    const body = requestBody(protocol, directive);
    const after =
      protocol === "openai-chat"
        ? { messages: [...(body.messages as unknown[]), { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c", content: "r" }] }
        : protocol === "openai-responses"
          ? { input: [...(body.input as unknown[]), { type: "function_call", call_id: "c", name: "t", arguments: "{}" }, { type: "function_call_output", call_id: "c", output: "r" }] }
          : { messages: [...(body.messages as unknown[]), { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "r" }] }] };
    const res = await post(sim.url, PROTOCOLS[protocol].path, { ...body, ...after }, PROTOCOLS[protocol].auth);
    expect(res.status).toBe(200);
    expect(res.text).toContain("tool t returned: r");
  });
});

describe("disconnect", () => {
  it.each(NAMES)("%s: answers 200, sends the opening frames and one delta, then drops the socket", async (protocol) => {
    const { path, auth } = PROTOCOLS[protocol];
    const received = await new Promise<{ status: number; body: string; error: Error | undefined }>((resolve) => {
      const req = request(sim.url + path, { method: "POST", headers: { "content-type": "application/json", ...auth } }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("error", (error) => resolve({ status: res.statusCode!, body, error }));
        res.on("end", () => resolve({ status: res.statusCode!, body, error: undefined }));
      });
      req.end(JSON.stringify(requestBody(protocol, '@sim {"fail":"disconnect","reply":"abcdef","delayMs":50}', { stream: true })));
    });
    expect(received.status).toBe(200);
    expect(received.error?.message).toMatch(/aborted/);
    const frames = parseSse(received.body);
    expect(received.body).toContain('"ab"');
    expect(received.body).not.toContain('"cd"');
    expect(frames.length).toBeGreaterThanOrEqual(2);
  });

  it("drops a non-streamed answer halfway through the body", async () => {
    await expect(send("openai-chat", '@sim {"fail":"disconnect"}')).rejects.toThrow();
  });
});

describe("bad input gets a protocol-shaped 400, never a crash", () => {
  it.each(NAMES)("%s: directive errors name the problem", async (protocol) => {
    const cases: [string, RegExp][] = [
      ["@sim {reply: 1}", /@sim directive: not valid JSON/],
      ["@sim", /expected a JSON object after @sim/],
      ["@sim [1,2]", /expected a JSON object/],
      ['@sim {"reply": 3}', /"reply" must be a string/],
      ['@sim {"chunks": 0}', /"chunks" must be an integer >= 1/],
      ['@sim {"delayMs": -1}', /"delayMs" must be a number >= 0/],
      ['@sim {"tool": {"input": {}}}', /"tool.name" must be a non-empty string/],
      ['@sim {"tool": {"name": "x", "input": [1]}}', /"tool.input" must be a JSON object/],
      ['@sim {"tool": {"name": "x", "unofered": true}}', /unknown field "tool.unofered"/],
      ['@sim {"tool": {"name": "x", "unoffered": 1}}', /"tool.unoffered" must be true/],
      ['@sim {"ask": true}', /"ask" must be a string/],
      ['@sim {"fail": "boom"}', /"fail" must be one of quota, auth/],
      ['@sim {"usage": {"input": 1.5}}', /"usage.input" must be an integer >= 0/],
      ['@sim {"replay": "x"}', /unknown field "replay"/],
    ];
    for (const [text, message] of cases) {
      const res = await send(protocol, `hello\n${text}`);
      expect(res.status, text).toBe(400);
      const body = res.json();
      if (protocol === "anthropic-messages") expect(body).toEqual({ type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(message) } });
      else expect(body).toEqual({ error: { type: "invalid_request_error", message: expect.stringMatching(message), param: null, code: null } });
    }
  });

  it.each(NAMES)("%s: malformed bodies", async (protocol) => {
    const { path, auth } = PROTOCOLS[protocol];
    const field = protocol === "openai-responses" ? "input" : "messages";
    const bodies: unknown[] = [
      "{not json",
      "",
      "[1,2]",
      { messages: [], input: [] },
      { model: "sim-1" },
      { model: "sim-1", [field]: 5 },
      { model: "sim-1", [field]: [42] },
      { model: "sim-1", [field]: [{ role: "robot", content: "x" }] },
      { model: "sim-1", [field]: [], stream: "yes" },
    ];
    for (const body of bodies) {
      const res = await post(sim.url, path, body, auth);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().error.type).toBe("invalid_request_error");
    }
    // Odd but valid content is tolerated: unknown parts are skipped, not fatal.
    const odd = { model: "sim-1", ...(protocol === "anthropic-messages" ? { max_tokens: 10 } : {}), [field]: [{ role: "user", content: [{ type: "image" }, null, { type: "text", text: "ok" }] }] };
    const res = await post(sim.url, path, odd, auth);
    expect(res.status).toBe(200);
    expect(res.text).toContain("echo: ok");
  });

  it.each(NAMES)("%s: a request without an API key is a 401", async (protocol) => {
    const res = await post(sim.url, PROTOCOLS[protocol].path, requestBody(protocol, "hi"), { "x-api-key": "", authorization: "Basic abc" });
    expect(res.status).toBe(401);
    const body = res.json();
    if (protocol === "anthropic-messages") expect(body).toEqual({ type: "error", error: { type: "authentication_error", message: expect.any(String) } });
    else expect(body.error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/API key/) });
  });

  it("OpenAI paths do not take x-api-key", async () => {
    const res = await post(sim.url, "/v1/chat/completions", requestBody("openai-chat", "hi"), { "x-api-key": "k" });
    expect(res.status).toBe(401);
  });

  it("answers 404 JSON for unknown routes and wrong methods", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/v1/chat/completions"], ["POST", "/v1/models"], ["PUT", "/_sim/requests"]] as const) {
      const res = await fetch(sim.url + path, { method });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: { message: `Invalid URL (${method} ${path})`, type: "invalid_request_error", param: null, code: null } });
    }
  });
});

describe("the grammar", () => {
  it("uses the last directive of the turn and keeps lines that only look alike", async () => {
    const res = await post(
      sim.url,
      "/v1/chat/completions",
      {
        model: "sim-1",
        messages: [
          { role: "user", content: '@sim {"reply":"first"}' },
          { role: "user", content: '@simple is not a directive\n  @sim {"chunks":1}' },
        ],
      },
      { authorization: "Bearer k" },
    );
    expect(res.json().choices[0].message.content).toBe("echo: @simple is not a directive");
  });

  it("splits on code points, never halving an emoji", async () => {
    const res = await send("openai-chat", '@sim {"reply":"😀😀😀","chunks":2}', { stream: true });
    const deltas = parseSse(res.text)
      .filter((f) => f.data !== "[DONE]")
      .map((f) => JSON.parse(f.data).choices[0]?.delta.content)
      .filter((d) => d);
    expect(deltas).toEqual(["😀😀", "😀"]);
  });

  it("cuts a long tool result to 2000 characters in the answer", async () => {
    const long = "x".repeat(2500);
    const res = await post(
      sim.url,
      "/v1/chat/completions",
      {
        model: "sim-1",
        messages: [
          { role: "user", content: '@sim {"tool":{"name":"cat","input":{}}}' },
          { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "cat", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c", content: long },
        ],
      },
      { authorization: "Bearer k" },
    );
    expect(res.json().choices[0].message.content).toBe(`tool cat returned: ${"x".repeat(2000)}`);
  });

  it("echoes an empty turn as one empty delta", async () => {
    const res = await send("anthropic-messages", '@sim {"reply":""}', { stream: true });
    const deltas = parseSse(res.text).filter((f) => f.event === "content_block_delta");
    expect(deltas.map((f) => JSON.parse(f.data).delta.text)).toEqual([""]);
  });
});

describe("side endpoints", () => {
  beforeEach(async () => {
    await fetch(`${sim.url}/_sim/requests`, { method: "DELETE" });
  });

  it("lists its catalog OpenAI-style: its own models first, then the providers', none deprecated or failing on purpose", async () => {
    const res = await fetch(`${sim.url}/v1/models`);
    const body = (await res.json()) as { object: string; data: { id: string; object: string; owned_by: string; created: number }[] };
    expect(body.object).toBe("list");
    const ids = body.data.map((m) => m.id);
    expect(ids.slice(0, 9)).toEqual(["sim-1", "sim-2", "sim-3", "sim-mini", "sim-unpriced", "sim-8k", "gpt-sim", "claude-sim", "claude-sim-8k"]);
    expect(ids).toEqual(expect.arrayContaining(["gpt-5", "claude-sonnet-4-5"]));
    for (const hidden of ["sim-legacy", "sim-broken", "gpt-4"]) expect(ids).not.toContain(hidden);
    expect(body.data.every((m) => m.object === "model" && m.owned_by === "simulator" && Number.isInteger(m.created))).toBe(true);
  });

  it("records the last 100 model requests, newest last, and clears them", async () => {
    await send("openai-chat", "one");
    await post(sim.url, "/v1/messages?beta=true", requestBody("anthropic-messages", "two"), { "x-api-key": "key-2" });
    await post(sim.url, "/v1/responses", "{broken", {});
    const res = await fetch(`${sim.url}/_sim/requests`);
    const { requests } = (await res.json()) as { requests: Record<string, unknown>[] };
    expect(requests).toHaveLength(3);
    expect(requests[0]).toMatchObject({ protocol: "openai-chat", path: "/v1/chat/completions", model: "sim-1", headers: { authorization: "Bearer x" } });
    expect(requests[0]!.body).toEqual(requestBody("openai-chat", "one"));
    expect(requests[1]).toMatchObject({ protocol: "anthropic-messages", path: "/v1/messages?beta=true", model: "claude-sim", headers: { "x-api-key": "key-2" } });
    expect(requests[2]).toMatchObject({ protocol: "openai-responses", model: null, headers: {}, body: "{broken" });
    expect(Number.isNaN(Date.parse(requests[0]!.at as string))).toBe(false);

    for (let i = 0; i < 105; i++) await send("openai-chat", `n${i}`);
    const { requests: kept } = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as { requests: { body: { messages: { content: string }[] } }[] };
    expect(kept).toHaveLength(100);
    expect(kept.at(-1)!.body.messages[0]!.content).toBe("n104");
    expect(kept[0]!.body.messages[0]!.content).toBe("n5");

    expect((await fetch(`${sim.url}/_sim/requests`, { method: "DELETE" })).status).toBe(204);
    expect(await (await fetch(`${sim.url}/_sim/requests`)).json()).toEqual({ requests: [] });
  });
});

describe("lifecycle", () => {
  it("stops writing when the client goes away mid-stream and keeps serving", async () => {
    const controller = new AbortController();
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify(requestBody("openai-chat", '@sim {"chunks":50,"delayMs":100}', { stream: true })),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const next = await send("openai-chat", "still here");
    expect(next.json().choices[0].message.content).toBe("echo: still here");
  });

  it("close() ends open streams instead of waiting for them", async () => {
    const own = await startSimulator({ port: 0 });
    expect(own.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${own.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: JSON.stringify(requestBody("anthropic-messages", '@sim {"chunks":100,"delayMs":1000}', { stream: true })),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(fetch(`${own.url}/v1/models`)).rejects.toThrow();
  });
});
