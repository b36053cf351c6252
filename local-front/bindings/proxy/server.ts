import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { createSecureContext, TLSSocket, type SecureContext } from "node:tls";
import type { AccountPool, Credential } from "../accounts/pool.js";
import { PROXY_CODES } from "../../../src/api/errors.js";
import { isLoopback } from "../../../src/shared/loopback.js";
import type { ProxyCa } from "./ca.js";
import type { Placeholders } from "./placeholder.js";
import type { Upstream } from "./upstream.js";

export interface CredentialProxy {
  /** http://127.0.0.1:PORT, for sessions' HTTPS_PROXY. */
  url: string;
  /** Destinations refused so far, as host:port. */
  refused: string[];
  /** Why the proxy last failed a thread's provider call since `sinceMs`, if it did. */
  failureSince(threadId: string, sinceMs: number): string | null;
  close(): Promise<void>;
}

export interface ProxyOptions {
  ca: ProxyCa;
  pool: AccountPool;
  placeholders: Placeholders;
  upstream: Upstream;
}

/** Headers that belong to one hop (RFC 9110 7.6.1) and to the proxy itself. */
const HOP_HEADERS = ["connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"];
/** How long a thread's last proxy failure is kept for its turn's end to find. */
const FAILURE_MEMORY_MS = 60 * 60_000;
/** Longer than the clients of the proxy keep an idle tunnel (undici: 4 s; the engines' agents, seconds). */
const TUNNEL_IDLE_MS = 65_000;
/** Error bodies are read whole (they are small) so the account's health can say what the provider said. */
const ERROR_BODY_LIMIT = 16 * 1024;

/** A refusal as the engines' SDKs read a provider's: JSON, with the code in a header too. */
function refusalBody(code: string, message: string): string {
  return JSON.stringify({ error: { type: "proxy_error", code, message }, type: "error" });
}

function bearer(value: string | undefined): string | undefined {
  return value?.startsWith("Bearer ") ? value.slice(7) : undefined;
}

/**
 * The credential proxy: the sessions' only way out (HTTP_PROXY/HTTPS_PROXY). Calls to a
 * provider host are intercepted (HTTPS with a certificate from the proxy's CA); a
 * placeholder credential in them is checked and replaced by the real credential of the
 * account it names, and the answer updates that account's health. Loopback passes
 * through untouched; every other destination is refused with 403 and logged, so a
 * session reaching for an outside host is seen rather than silently allowed.
 */
export async function startCredentialProxy(opts: ProxyOptions): Promise<CredentialProxy> {
  const providerHosts = opts.pool.hosts();
  const refused: string[] = [];
  const failures = new Map<string, { at: number; error: string }>();
  const noteFailure = (threadId: string, error: string) => {
    const now = Date.now();
    for (const [id, f] of failures) if (f.at < now - FAILURE_MEMORY_MS) failures.delete(id);
    failures.set(threadId, { at: now, error });
  };
  const refuse = (where: string) => {
    refused.push(where);
    console.error(`agent-runtime: proxy refused egress to ${where} (not loopback, not a provider)`);
  };
  const passes = (host: string) => isLoopback(host);
  // One context a host, as its certificate is one: a context made per tunnel costs the
  // key's parsing each time, and its own session-ticket keys make every handshake a full one.
  const contexts = new Map<string, SecureContext>();
  const contextFor = (host: string) => {
    let context = contexts.get(host);
    if (!context) contexts.set(host, (context = createSecureContext(opts.ca.leaf(host))));
    return context;
  };

  const fail = (res: ServerResponse, status: number, code: string, message: string) => {
    if (res.headersSent) return res.destroy();
    res.writeHead(status, { "content-type": "application/json", "x-service-proxy": code });
    res.end(refusalBody(code, message));
  };
  const egressRefusal = (where: string) => `credential proxy: ${where} is neither loopback nor a provider; sessions reach nothing else`;

  /** A provider call: swap the placeholder, forward, watch the answer. */
  const forward = async (req: IncomingMessage, res: ServerResponse, target: URL) => {
    const headers = withoutHop(req.headers);
    // Answers come back uncompressed, so error bodies can be read to judge the account's health.
    delete headers["accept-encoding"];
    const asBearer = bearer(req.headers.authorization);
    const offered = asBearer ?? (typeof req.headers["x-api-key"] === "string" ? req.headers["x-api-key"] : undefined);
    const claim = offered ? opts.placeholders.read(offered) : null;
    if (claim && !opts.pool.has(claim.account)) return fail(res, 401, PROXY_CODES.unknownAccount, `credential proxy: no account ${claim.account} on this host`);
    // A credential goes only where its account lives, and never in clear text to the network.
    if (claim && !opts.pool.origins(claim.account).includes(target.origin))
      return fail(res, 403, PROXY_CODES.wrongDestination, `credential proxy: account ${claim.account}'s credential is not sent to ${target.origin}`);
    /** The credential sent in the placeholder's stead: a 401 is judged against it. */
    let sent: string | undefined;
    if (claim) {
      const cred = await opts.pool.credential(claim.account);
      if (!cred.ok) {
        const message = `credential proxy: ${cred.error}`;
        noteFailure(claim.threadId, cred.reason === "unreachable" ? message : `the provider refused account ${claim.account}'s login`);
        return cred.reason === "unreachable" ? fail(res, 502, PROXY_CODES.upstreamUnreachable, message) : fail(res, 401, PROXY_CODES.loginRefused, message);
      }
      swap(headers, opts.pool.provider(claim.account), cred.credential, asBearer !== undefined);
      sent = cred.credential.secret;
    }
    const upstream = opts.upstream.request(target, req.method ?? "GET", headers);
    upstream.on("error", (err) => {
      const message = `credential proxy could not reach ${target.host}: ${err.message}`;
      if (claim) {
        opts.pool.unreachable(claim.account, message);
        noteFailure(claim.threadId, message);
      }
      fail(res, 502, PROXY_CODES.upstreamUnreachable, message);
    });
    upstream.on("response", (answer) => {
      const status = answer.statusCode ?? 502;
      const out = withoutHop(answer.headers);
      if (status < 400 || !claim) {
        if (claim) opts.pool.response(claim.account, status, answer.headers, "", sent);
        res.writeHead(status, out);
        // A provider stream that breaks off must break the session's too, not leave it waiting.
        answer.on("error", () => res.destroy());
        answer.on("aborted", () => res.destroy());
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= ERROR_BODY_LIMIT) chunks.push(c);
      });
      answer.on("end", () => {
        const body = Buffer.concat(chunks);
        opts.pool.response(claim.account, status, answer.headers, body.toString("utf8"), sent);
        res.writeHead(status, { ...out, "content-length": body.length });
        res.end(body);
      });
      answer.on("error", () => res.destroy());
    });
    req.pipe(upstream);
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, target: URL) => {
    forward(req, res, target).catch((err: unknown) => fail(res, 502, PROXY_CODES.proxyFailed, `credential proxy: ${(err as Error).message}`));
  };

  // Requests that arrive inside an intercepted TLS tunnel.
  const inner: Server = createServer((req, res) => {
    const host = (req.socket as TLSSocket & { target?: string }).target!;
    handle(req, res, new URL(req.url ?? "/", `https://${host}`));
  });
  // A tunnel is reused call after call: its client, not the proxy, closes it when idle,
  // or a call sent as the proxy closed it would fail unsent (proxy-upstream-unreachable).
  inner.keepAliveTimeout = TUNNEL_IDLE_MS;

  const server: Server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      return fail(res, 400, PROXY_CODES.absoluteUriRequired, `credential proxy: a proxied request names an absolute URI, not ${JSON.stringify(req.url ?? "")}`);
    }
    const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
    if (providerHosts.has(host)) return handle(req, res, target);
    if (!passes(host)) {
      const where = `${host}:${target.port || 80}`;
      refuse(where);
      return fail(res, 403, PROXY_CODES.egressRefused, egressRefusal(where));
    }
    const upstream = httpRequest(target, { method: req.method, headers: withoutHop(req.headers) });
    upstream.on("response", (up) => {
      res.writeHead(up.statusCode ?? 502, withoutHop(up.headers));
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });

  // A CONNECT's socket leaves the server's HTTP connections (closeAllConnections does not
  // reach it) yet holds its close until the session's client drops the idle tunnel, seconds
  // later: the front's stop waited on every session's keep-alive (4 s after a turn).
  const tunnels = new Set<Socket>();
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    // After `connect` the socket has no error handler of the server's: a reset must not crash the front.
    client.on("error", () => {});
    tunnels.add(client);
    client.once("close", () => tunnels.delete(client));
    const [raw = "", port = "443"] = (req.url ?? "").split(/:(?=\d+$)/);
    const host = raw.replace(/^\[(.*)\]$/, "$1");
    if (providerHosts.has(host)) {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) client.unshift(head);
      const tls = new TLSSocket(client, { isServer: true, secureContext: contextFor(host) }) as TLSSocket & { target?: string };
      tls.target = port === "443" ? host : `${host}:${port}`;
      tls.on("error", () => client.destroy());
      inner.emit("connection", tls);
      return;
    }
    if (!passes(host)) {
      const where = `${host}:${port}`;
      refuse(where);
      const body = refusalBody(PROXY_CODES.egressRefused, egressRefusal(where));
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\nx-service-proxy: ${PROXY_CODES.egressRefused}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    // A destroyed client (a reset, the proxy's close) ends no pipe: the passed-through connection goes with it.
    client.on("close", () => upstream.destroy());
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    failureSince(threadId, sinceMs) {
      const f = failures.get(threadId);
      return f && f.at >= sinceMs ? f.error : null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        inner.closeAllConnections();
        server.closeAllConnections();
        for (const t of tunnels) t.destroy();
        server.close(() => resolve());
      }),
  };
}

function withoutHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.includes(name) && value !== undefined) out[name] = value;
  return out;
}

/**
 * Puts the real credential where the placeholder was. Anthropic keys go back in the
 * header the client used (`x-api-key` for the Messages API, a bearer token for its
 * OpenAI-compatible endpoint); OAuth logins are always bearer tokens.
 */
function swap(headers: OutgoingHttpHeaders, provider: string, cred: Credential, sentAsBearer: boolean): void {
  delete headers.authorization;
  delete headers["x-api-key"];
  if (provider === "anthropic" && cred.kind === "api-key" && !sentAsBearer) {
    headers["x-api-key"] = cred.secret;
    return;
  }
  headers.authorization = `Bearer ${cred.secret}`;
  if (provider === "anthropic" && cred.kind === "oauth") {
    const beta = typeof headers["anthropic-beta"] === "string" ? headers["anthropic-beta"] : "";
    if (!beta.includes("oauth-")) headers["anthropic-beta"] = beta ? `${beta},oauth-2025-04-20` : "oauth-2025-04-20";
  }
}
