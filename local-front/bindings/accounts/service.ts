import type { IncomingMessage, ServerResponse } from "node:http";
import { ACCOUNTS_TOKEN_HEADER, type ModelCatalogAnswer } from "../../../src/api/accounts.js";
import type { CompletionCall, CompletionReport } from "../../../src/api/completions.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse } from "../../../src/api/outcome.js";
import { readJson, segment, serveBinding, type BindingSocket } from "../http.js";
import { runCompletion, type CompletionDeps } from "../completions/call.js";
import { servedModels } from "../served-models.js";
import type { AccountPool } from "./pool.js";

/** Longer than any client of ours keeps an idle connection (undici: 4 s), so the client closes first. */
const IDLE_KEPT_MS = 65_000;

export interface AccountService {
  /** host:port, for the worker's ACCOUNTS binding. */
  address: string;
  close(): Promise<void>;
}

/**
 * The account pool as a binding of the worker: health and identity for `GET /accounts`,
 * short-lived access tokens, the operator's engine_b credit reset and model-refusal clear, and the completions endpoint's model calls (streamed back
 * as NDJSON reports, src/api/completions.ts). Only the worker (holding this boot's token)
 * is answered; the worker decides whether its own caller is trusted.
 */
export async function startAccountService(pool: AccountPool, completions: CompletionDeps, token: string, socket?: BindingSocket): Promise<AccountService> {
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

  // The completions endpoint's calls reuse workerd's connections to the pool one after another.
  return serveBinding({ name: "the account pool", gate: { header: ACCOUNTS_TOKEN_HEADER, token }, keepAliveMs: IDLE_KEPT_MS }, async (req, res, url) => {
    const path = url.pathname;
    if (req.method === "POST" && path === "/completions") return complete(req, res);
    if (req.method === "GET" && path === "/models") return ok({ object: "list", data: completions.catalog.list() });
    const model = /^\/models\/([^/]+)$/.exec(path);
    if (req.method === "GET" && model) {
      const entry = completions.catalog.entry(decodeModelId(model[1]!));
      return entry ? ok(entry) : refuse(404, `no model ${model[1]}`, CODES.modelNotFound);
    }
    if (req.method === "GET" && path === "/catalog") {
      const closed = completions.simulatorUrl !== null;
      return ok({ closed, models: closed ? servedModels().map((m) => m.id) : [] } satisfies ModelCatalogAnswer);
    }
    if (req.method === "GET" && path === "/accounts") return ok({ accounts: pool.views(), simulator: completions.simulatorUrl !== null });
    const m = /^\/accounts\/([^/]+)\/access-token$/.exec(path);
    if (req.method === "POST" && m)
      return pool.issueAccessToken(segment(m[1]!)).catch((err: unknown) => refuse(503, (err as Error).message, CODES.credentialUnreachable));
    const reset = /^\/accounts\/([^/]+)\/engine-b\/credit-reset$/.exec(path);
    if (req.method === "POST" && reset) return pool.resetEngineBCredit(segment(reset[1]!));
    const refusal = /^\/accounts\/([^/]+)\/model-refusals\/([^/]+)$/.exec(path);
    if (req.method === "DELETE" && refusal) return pool.clearModelRefusal(segment(refusal[1]!), decodeModelId(refusal[2]!));
    return refuse(404, `no account route ${req.method} ${path}`, CODES.routeNotFound);
  }, socket);
}

/** A model id from its path segment; a malformed escape names no model. */
function decodeModelId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return "";
  }
}
