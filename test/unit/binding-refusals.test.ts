import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNTS_TOKEN_HEADER } from "../../src/api/accounts.js";
import { CODE_TOKEN_HEADER } from "../../src/api/code.js";
import { ENGINES_TOKEN_HEADER } from "../../src/api/engine.js";
import { CODES } from "../../src/api/errors.js";
import { startAccountService } from "../../local-front/bindings/accounts/service.js";
import { HostClients } from "../../local-front/bindings/code-host/clients.js";
import { startCodeService } from "../../local-front/bindings/code/service.js";
import { ModelCatalog } from "../../local-front/bindings/completions/models.js";
import { startToolServer } from "../../local-front/bindings/engines/tools/tool-server.js";
import { Worktrees } from "../../local-front/bindings/git/worktrees.js";
import { bareEngineHost } from "../support/engine-host.js";
import { removeDir } from "../support/front.js";

/**
 * Every refusal of the front's bindings is the worker's `{error, code}`, with a code from
 * `CODES`: each server is asked without its token, with a body that is not JSON, on a
 * path it does not serve, and with bodies and paths its routes refuse.
 */
const TOKEN = "the-token";
const scratch = mkdtempSync(join(tmpdir(), "binding-refusals-"));
const closers: (() => Promise<void>)[] = [];
const servers: Record<"engines" | "code" | "accounts" | "tools", { base: string; header: string }> = {} as never;
let toolToken = "";

beforeAll(async () => {
  const { host: engines, pool, placeholders } = await bareEngineHost(scratch, TOKEN);
  const clients = new HostClients([], null);
  const code = await startCodeService([], TOKEN, (argv, cwd) => spawn(argv[0]!, argv.slice(1), { cwd }), clients, new Worktrees(scratch, clients, () => []));
  const accounts = await startAccountService(pool, { pool, placeholders, proxy: null, simulatorUrl: null, catalog: new ModelCatalog(new Set(), "none") }, TOKEN);
  const tools = await startToolServer(() => Promise.reject(new Error("no worker in this test")));
  toolToken = tools.grant({ thread: "thr_a", turn: "turn_1", tools: ["delegate"], handoffTo: [] });
  closers.push(engines.close, code.close, accounts.close, tools.close);
  servers.engines = { base: `http://${engines.address}`, header: ENGINES_TOKEN_HEADER };
  servers.code = { base: `http://${code.address}`, header: CODE_TOKEN_HEADER };
  servers.accounts = { base: `http://${accounts.address}`, header: ACCOUNTS_TOKEN_HEADER };
  servers.tools = { base: new URL(tools.url).origin, header: "authorization" };
});
afterAll(async () => {
  for (const close of closers) await close();
  removeDir(scratch);
});

type Ask = [server: keyof typeof servers, method: string, path: string, body: string | null, status: number, code: string, token?: string];

const BAD_JSON = "{nope";
const ASKS: Ask[] = [
  ["engines", "POST", "/turns", "{}", 403, CODES.internalOnly, "a-guess"],
  ["engines", "GET", "/engines", null, 403, CODES.internalOnly, ""],
  ["engines", "POST", "/merges", BAD_JSON, 400, CODES.invalidBody],
  ["engines", "POST", "/nowhere", "{}", 404, CODES.routeNotFound],
  ["engines", "GET", "/nowhere", null, 405, CODES.methodNotAllowed],
  ["engines", "POST", "/merges", JSON.stringify({ into: "relative", from: "/b", message: "" }), 400, CODES.invalidBody],
  ["engines", "POST", "/turns/turn_x/steer", JSON.stringify({ seq: 1, text: "hi" }), 404, CODES.noTurnRunning],
  ["engines", "POST", "/turns/%E0%A4%A/interrupt", "{}", 400, CODES.invalidParam],
  ["engines", "POST", "/turns", JSON.stringify({ turnId: "t", threadId: "thr", engine: "engine_b" }), 503, CODES.engineUnavailable],
  ["code", "GET", "/roots", null, 403, CODES.internalOnly, "a-guess"],
  ["code", "POST", "/search", BAD_JSON, 400, CODES.invalidBody],
  ["code", "POST", "/git/worktrees", BAD_JSON, 400, CODES.invalidBody],
  ["code", "POST", "/github/overlap", BAD_JSON, 400, CODES.invalidBody],
  ["code", "GET", "/nowhere", null, 404, CODES.routeNotFound],
  ["code", "GET", "/git/nowhere", null, 404, CODES.routeNotFound],
  ["code", "GET", "/github/nowhere", null, 404, CODES.routeNotFound],
  ["code", "POST", "/search", "{}", 400, CODES.invalidBody],
  ["code", "GET", "/read?root=r", null, 400, CODES.invalidQuery],
  ["code", "GET", "/read?root=r&path=a", null, 404, CODES.codeRootNotFound],
  ["code", "POST", "/git/worktrees", "{}", 400, CODES.invalidBody],
  ["code", "POST", "/github/overlap", "{}", 400, CODES.invalidBody],
  ["code", "GET", "/github/o/r/prs/x/diff", null, 400, CODES.invalidParam],
  ["code", "GET", "/github/o%E0%A4%A/r/prs", null, 400, CODES.invalidParam],
  ["accounts", "GET", "/accounts", null, 403, CODES.internalOnly, "a-guess"],
  ["accounts", "POST", "/completions", BAD_JSON, 400, CODES.invalidBody],
  ["accounts", "GET", "/nowhere", null, 404, CODES.routeNotFound],
  ["accounts", "GET", "/models/none-such", null, 404, CODES.modelNotFound],
  ["accounts", "POST", "/accounts/none-such/access-token", "{}", 404, CODES.accountNotFound],
  ["accounts", "POST", "/accounts/%E0%A4%A/access-token", "{}", 400, CODES.invalidParam],
  ["accounts", "POST", "/accounts/none-such/engine-b/credit-reset", null, 404, CODES.accountNotFound],
  ["accounts", "DELETE", "/accounts/none-such/model-refusals/gpt-5", null, 404, CODES.accountNotFound],
  ["accounts", "DELETE", "/accounts/%E0%A4%A/model-refusals/gpt-5", null, 400, CODES.invalidParam],
  ["tools", "POST", "/mcp", "{}", 401, CODES.turnNotRunning, "Bearer a-guess"],
  ["tools", "POST", "/mcp", "{}", 401, CODES.turnNotRunning, ""],
  ["tools", "POST", "/nowhere", "{}", 404, CODES.routeNotFound],
  ["tools", "GET", "/mcp", null, 405, CODES.methodNotAllowed],
];

const KNOWN = new Set<string>(Object.values(CODES));

describe("the front's bindings", () => {
  it.each(ASKS)("%s %s %s %s: %i %s", async (name, method, path, body, status, code, token) => {
    const server = servers[name];
    const held = name === "tools" ? `Bearer ${toolToken}` : TOKEN;
    const res = await fetch(`${server.base}${path}`, { method, headers: { [server.header]: token ?? held }, ...(body === null ? {} : { body }) });
    expect(res.headers.get("content-type")).toBe("application/json");
    const answer = (await res.json()) as { error?: unknown; code?: unknown };
    expect(typeof answer.error).toBe("string");
    expect(KNOWN.has(answer.code as string), `code ${String(answer.code)}`).toBe(true);
    expect([res.status, answer.code]).toEqual([status, code]);
  });
});
