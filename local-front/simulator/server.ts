import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { createSecureContext, type SecureContext } from "node:tls";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { anthropicMessages } from "./anthropic-messages.js";
import { SimCredentials, type CredentialSet, type Holder } from "./credentials.js";
import type { Conversation } from "./conversation.js";
import type { Provider } from "../../src/api/accounts.js";
import { anthropicError, BadRequest, type ErrorResponse, type SimError } from "./errors.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";
import type { Protocol } from "./protocol.js";
import { PROVIDERS, serves } from "./providers.js";
import { Issued } from "./issued.js";
import { servedModels } from "./models.js";
import { simulatedImages } from "../../src/api/simulated-models.js";
import { decide, deltaCount, type Outcome, type Reply } from "./reply.js";
import { RequestLog } from "./request-log.js";
import { writeSse, type Frame, type Pacing } from "./sse.js";
import { readBody } from "./body.js";

// The front's composition root (local-front/network.ts) builds the credentials it starts this with, and imports nothing else of the simulator.
export type { CredentialSet } from "./credentials.js";

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** Serve HTTPS, with a certificate per host name the client asks for (SNI). */
  tls?: { certFor(host: string): { key: string; cert: string } };
  /** Check credentials as a provider would; without it any non-empty key is accepted. */
  credentials?: CredentialSet;
}

export interface Simulator {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  close(): Promise<void>;
}

const ROUTES: Record<string, Protocol> = {
  "/v1/chat/completions": openaiChat,
  "/v1/responses": openaiResponses,
  "/v1/messages": anthropicMessages,
};

const LOG_CAPACITY = 100;
// Agent clients send whole transcripts with images; the cap only stops runaway uploads.
const BODY_LIMIT = 64 * 1024 * 1024;


function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, err: ErrorResponse): void {
  sendJson(res, err.status, err.body, err.headers);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * A non-streamed answer takes as long as its stream would have, so timeouts can be
 * exercised either way. A failure after the answer began is, without a stream, a body cut
 * in half (dropped, or ended cleanly), or the provider's server error.
 */
async function answerJson(res: ServerResponse, reply: Reply, body: unknown, serverError: ErrorResponse): Promise<void> {
  const wait = reply.delayMs * (deltaCount(reply) - 1);
  if (wait > 0) {
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    try {
      await sleep(wait, undefined, { signal: gone.signal });
    } catch {
      return;
    }
  }
  if (reply.cut === null) return sendJson(res, 200, body);
  if (reply.cut === "stream-error" || reply.cut === "stream-failed") return sendError(res, serverError);
  const half = JSON.stringify(body).slice(0, Math.ceil(JSON.stringify(body).length / 2));
  res.writeHead(200, { "content-type": "application/json" });
  if (reply.cut === "stream-end") res.end(half);
  else res.write(half, () => res.destroy());
}

/** How the stream of `frames` ends early, if the reply was scripted to fail after it began. */
function streamCut(protocol: Protocol, reply: Reply, conv: Conversation, frames: Frame[]): Pacing["cut"] {
  if (reply.cut === null) return null;
  if (reply.cut === "disconnect") return "destroy";
  if (reply.cut === "stream-end") return [];
  return protocol.failure(reply.cut, conv, frames.slice(0, frames.findIndex((f) => f.delta) + 1));
}

/** Paths where providers refresh OAuth logins. */
const TOKEN_PATHS = new Set(["/oauth/token", "/v1/oauth/token"]);
/** The header each provider names the organization in. */
const ORG_HEADER_OF: Record<Provider, string> = { openai: "openai-organization", anthropic: "anthropic-organization-id" };
/** The header each protocol family names the organization in, where the host names no provider. */
const ORG_HEADER: Record<string, string> = { "openai-chat": "openai-organization", "openai-responses": "openai-organization", "anthropic-messages": "anthropic-organization-id" };

interface Context {
  log: RequestLog;
  credentials: SimCredentials | null;
  issued: Issued;
}

/**
 * One model call. Standing in for the providers, the simulator answers as the provider
 * whose host was called: only that provider's keys, only the models it serves, and (on
 * Anthropic's OpenAI-compatible endpoint) Anthropic's own errors.
 */
async function handleModelRequest(protocol: Protocol, provider: Provider | null, req: IncomingMessage, res: ServerResponse, { log, credentials, issued }: Context): Promise<void> {
  const body = await readBody(req, BODY_LIMIT);
  const parsed = "text" in body ? parseJson(body.text) : { ok: false as const };
  log.add(protocol.name, req.url ?? "", req.headers, parsed.ok ? parsed.value : "text" in body ? body.text : null);
  const errorOf = provider === "anthropic" ? anthropicError : protocol.error;
  const reject = (e: SimError) => sendError(res, errorOf(e));
  if ("tooLarge" in body) return reject({ kind: "too-large", limit: BODY_LIMIT });
  if (!protocol.hasApiKey(req.headers)) return reject({ kind: "missing-key" });
  let holder: Holder | null = null;
  if (credentials) {
    const checked = credentials.check(req.headers, provider);
    if (checked === "expired") return reject({ kind: "token-expired" });
    if (checked === null) return reject({ kind: "fail", fail: "auth", model: "", retryAfter: 0 });
    holder = checked;
    res.setHeader(provider ? ORG_HEADER_OF[provider] : ORG_HEADER[protocol.name]!, holder.org);
  }
  if (!parsed.ok) return reject({ kind: "bad-request", message: "We could not parse the JSON body of your request: it is not valid JSON." });
  let conv: Conversation;
  let outcome: Outcome;
  try {
    conv = protocol.parse(parsed.value, req.headers, issued);
    if (provider && !serves(provider, conv.model)) return reject({ kind: "fail", fail: "model-not-found", model: conv.model, retryAfter: 0 });
    if (conv.images > 0 && simulatedImages(conv.model) === false)
      return reject({ kind: "bad-request", message: `Invalid content type. Image input is not supported by the model ${conv.model}.` });
    outcome = decide(conv, holder?.org ?? null);
  } catch (err) {
    if (err instanceof BadRequest) return reject({ kind: "bad-request", message: err.message });
    throw err;
  }
  if ("error" in outcome) return reject(outcome.error);
  const { reply } = outcome;
  if (conv.stream) {
    const frames = protocol.frames(reply, conv, issued);
    return writeSse(res, frames, { delayMs: reply.delayMs, cut: streamCut(protocol, reply, conv, frames) });
  }
  return answerJson(res, reply, protocol.json(reply, conv, issued), errorOf({ kind: "fail", fail: "server", model: conv.model, retryAfter: 0 }));
}

async function handleTokenRequest(req: IncomingMessage, res: ServerResponse, credentials: SimCredentials): Promise<void> {
  const body = await readBody(req, BODY_LIMIT);
  if (!("text" in body)) return sendJson(res, 413, { error: "invalid_request", error_description: "body too large" });
  const answer = credentials.refresh(body.text, req.headers["content-type"], credentials.providerAt(req.headers.host));
  sendJson(res, answer.status, answer.body);
}

function handle(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> | void {
  const { log } = ctx;
  // The Claude clients append `?beta=true`; routing looks at the path only.
  const path = new URL(req.url ?? "/", "http://simulator").pathname;
  const protocol = ROUTES[path];
  const provider = ctx.credentials?.providerAt(req.headers.host) ?? null;
  if (protocol && req.method === "POST" && (!provider || PROVIDERS[provider].protocols.includes(protocol.name))) return handleModelRequest(protocol, provider, req, res, ctx);
  if (ctx.credentials && TOKEN_PATHS.has(path) && req.method === "POST") return handleTokenRequest(req, res, ctx.credentials);
  if (path === "/v1/models" && req.method === "GET") {
    const created = Math.floor(Date.now() / 1000);
    return sendJson(res, 200, {
      object: "list",
      data: servedModels()
        .filter((m) => m.listed)
        .map(({ id }) => ({ id, object: "model", created, owned_by: "simulator" })),
    });
  }
  if (path === "/_sim/requests" && req.method === "GET") return sendJson(res, 200, { requests: log.list() });
  if (path === "/_sim/requests" && req.method === "DELETE") {
    log.clear();
    res.writeHead(204).end();
    return;
  }
  req.resume();
  sendJson(res, 404, { error: { message: `Invalid URL (${req.method} ${path})`, type: "invalid_request_error", param: null, code: null } });
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? "127.0.0.1";
  const ctx: Context = { log: new RequestLog(LOG_CAPACITY), credentials: opts.credentials ? new SimCredentials(opts.credentials) : null, issued: new Issued() };
  const listener: RequestListener = (req, res) => {
    Promise.resolve()
      .then(() => handle(req, res, ctx))
      .catch(() => {
        // A bug or a broken socket must cost one request, never the server.
        if (res.headersSent) res.destroy();
        else sendJson(res, 500, { error: { message: "simulator internal error", type: "server_error", param: null, code: null } });
      });
  };
  const tls = opts.tls;
  // A context a name, kept: made per connection, it would cost the key's parsing each time
  // and make every handshake a full one (its session-ticket keys would be new).
  const contexts = new Map<string, SecureContext>();
  const contextFor = (name: string) => {
    let context = contexts.get(name);
    if (!context) contexts.set(name, (context = createSecureContext(tls!.certFor(name))));
    return context;
  };
  const server = tls
    ? createTlsServer({ SNICallback: (name, cb) => cb(null, contextFor(name)), ...tls.certFor(host) }, listener)
    : createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://${urlHost(host)}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Streams still open (a slow `delayMs`, keep-alive sockets) would hold close() forever.
        server.closeAllConnections();
      }),
  };
}
