import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ACCOUNTS_TOKEN_HEADER, type ModelCatalogAnswer } from "../../../src/api/accounts.js";
import type { CompletionCall, CompletionReport } from "../../../src/api/completions.js";
import { CODES } from "../../../src/api/errors.js";
import { readJson, reply, replyOutcome } from "../http.js";
import { runCompletion, type CompletionDeps } from "../completions/call.js";
import { servedModels } from "../served-models.js";
import type { AccountPool } from "./pool.js";

export interface AccountService {
  /** host:port, for the worker's ACCOUNTS binding. */
  address: string;
  close(): Promise<void>;
}

/**
 * The account pool as a binding of the worker: health and identity for `GET /accounts`,
 * short-lived access tokens, and the completions endpoint's model calls (streamed back
 * as NDJSON reports, src/api/completions.ts). Only the worker (holding this boot's token)
 * is answered; the worker decides whether its own caller is trusted.
 */
export async function startAccountService(pool: AccountPool, completions: CompletionDeps, token: string): Promise<AccountService> {
  const complete = async (req: IncomingMessage, res: ServerResponse) => {
    const call = (await readJson(req)) as CompletionCall;
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-cache" });
    res.flushHeaders();
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const emit = (r: CompletionReport) => {
      if (!res.writableEnded) res.write(`${JSON.stringify(r)}\n`);
    };
    await runCompletion(completions, call, emit, abort.signal).catch((err: unknown) =>
      emit({ type: "error", status: 500, code: "internal_error", message: `the completion broke: ${(err as Error).message}`, attempts: [] }),
    );
    res.end();
  };

  const server: Server = createServer((req, res) => {
    if (req.headers[ACCOUNTS_TOKEN_HEADER] !== token) {
      req.resume();
      return reply(res, 403, { error: "the account pool answers the runtime's worker only" });
    }
    const path = new URL(req.url ?? "/", "http://accounts").pathname;
    if (req.method === "POST" && path === "/completions")
      return void complete(req, res).catch(() => (res.headersSent ? res.destroy() : reply(res, 400, { error: "a completion call is JSON", code: CODES.invalidBody })));
    req.resume();
    if (req.method === "GET" && path === "/models") return reply(res, 200, { object: "list", data: completions.catalog.list() });
    const model = /^\/models\/([^/]+)$/.exec(path);
    if (req.method === "GET" && model) {
      const entry = completions.catalog.entry(decodeModelId(model[1]!));
      return entry ? reply(res, 200, entry) : reply(res, 404, { error: `no model ${model[1]}`, code: CODES.modelNotFound });
    }
    if (req.method === "GET" && path === "/catalog") {
      const closed = completions.simulatorUrl !== null;
      const catalog: ModelCatalogAnswer = { closed, models: closed ? servedModels().map((m) => m.id) : [] };
      return reply(res, 200, catalog);
    }
    if (req.method === "GET" && path === "/accounts") return reply(res, 200, { accounts: pool.views(), simulator: completions.simulatorUrl !== null });
    const m = /^\/accounts\/([^/]+)\/access-token$/.exec(path);
    if (req.method === "POST" && m)
      return void pool.issueAccessToken(decodeURIComponent(m[1]!)).then(
        (issued) => replyOutcome(res, issued),
        (err: unknown) => reply(res, 503, { error: (err as Error).message, code: CODES.credentialUnreachable }),
      );
    reply(res, 404, { error: `no account route ${req.method} ${path}`, code: CODES.routeNotFound });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A model id from its path segment; a malformed escape names no model. */
function decodeModelId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return "";
  }
}
