import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CODES } from "../../src/api/errors.js";
import { refuse, type Outcome, type Refusal } from "../../src/api/outcome.js";
import { issuesSentence, type Issues } from "../../src/shared/issues.js";

/**
 * The one way the front's bindings serve the worker (the engine host, the code service,
 * the account pool) and the sessions (the tool server): a loopback server whose every
 * refusal is the worker's `{error, code}` with a code from `CODES`, and whose faults are a
 * coded 500 (`binding-failed`), never a bare one nor the router's `internal`.
 */

/** A secret for one boot or one turn: the tokens the worker's bindings check, a turn's tool token. */
export const newToken = (): string => randomBytes(24).toString("hex");

/** Whether a header holds the token; compared in constant time, so how long a refusal takes tells nothing of the token. */
export function holdsToken(given: string | string[] | undefined, token: string): boolean {
  if (typeof given !== "string" || token === "") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A refusal thrown from below a route (a body that is not JSON): the server answers it as it is. */
class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.body.error);
  }
}

/** The request's body as JSON (empty is `{}`); one that is not JSON is the caller's mistake, a 400 `invalid-body`. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  try {
    return text ? (JSON.parse(text) as unknown) : {};
  } catch (err) {
    throw new Refused(refuse(400, `the body is not JSON: ${(err as Error).message}`, CODES.invalidBody));
  }
}

/** A path segment, decoded; a malformed escape names nothing, a 400 `invalid-param`. */
export function segment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new Refused(refuse(400, `the path segment ${raw} is not a valid escape`, CODES.invalidParam));
  }
}

/** A request zod refused; `code` says which part was wrong (`invalid-body`, `invalid-param` or `invalid-query`). */
export function invalid(error: Issues, code: string = CODES.invalidBody): Refusal {
  return refuse(400, issuesSentence(error), code);
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  // With its length, the answer goes as one body rather than in chunks, and the worker can pass it on so (`answerBody`).
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers }).end(text);
}

/** A binding's answer in the worker's shapes: the value as JSON, or the refusal with its status and headers. */
function replyOutcome(res: ServerResponse, outcome: Outcome<unknown>): void {
  if (outcome.ok) reply(res, 200, outcome.value);
  else reply(res, outcome.status, outcome.body, outcome.headers);
}

/** What a route answers: an Outcome, sent as JSON; or nothing, when it wrote its answer itself (a report stream, the MCP transport). */
export type BindingRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<Outcome<unknown> | void>;

export interface BindingOptions {
  /** Who answers, as a sentence's subject ("the code service"): the gate's and the fault's sentences name it. */
  name: string;
  /** The header that must hold this boot's token: anyone else is refused `403 internal-only` before the route runs. */
  gate?: { header: string; token: string };
  /** A fault of the binding's own that is a refusal with its own code (git that cannot answer, a bad glob); null: a fault. */
  refusalOf?: (err: unknown) => Refusal | null;
  /** Node's request and header timeouts (ms; 0: none), when the binding keeps answers open longer than Node's defaults allow. */
  timeouts?: { request: number; headers: number };
  /**
   * How long an idle connection of workerd's is kept (ms), when workerd reuses them call
   * after call: the side that closes an idle connection must be the client, or a request
   * sent as the server closes is lost unanswered.
   */
  keepAliveMs?: number;
}

export interface BindingServer {
  /** host:port on loopback. */
  address: string;
  close(): Promise<void>;
}

/**
 * A binding's loopback port, taken before the binding can answer: workerd starts with its
 * address while the front makes the binding, and a request that comes meanwhile waits for
 * `serve`, not refused.
 */
export interface BindingSocket {
  address: string;
  /** Serves `route` behind the token gate, answering faults as a coded 500; once only. */
  serve(options: BindingOptions, route: BindingRoute): BindingServer;
  close(): Promise<void>;
}

export async function bindingSocket(): Promise<BindingSocket> {
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const waiting: [IncomingMessage, ServerResponse][] = [];
  const server = createServer((req, res) => (handle ? handle(req, res) : waiting.push([req, res])));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    address,
    close,
    serve({ name, gate, refusalOf, timeouts, keepAliveMs }, route) {
      if (handle) throw new Error(`${name} is served already`);
      const answer = async (req: IncomingMessage, res: ServerResponse) => {
        if (gate && !holdsToken(req.headers[gate.header], gate.token)) {
          req.resume();
          return replyOutcome(res, refuse(403, `${name} answers the runtime's worker only`, CODES.internalOnly));
        }
        const answered = await route(req, res, new URL(req.url ?? "/", "http://binding"));
        if (answered) replyOutcome(res, answered);
      };
      // The server reads these at each check of its connections and each answer's end, so they hold from here on.
      if (keepAliveMs) server.keepAliveTimeout = keepAliveMs;
      if (timeouts) {
        server.requestTimeout = timeouts.request;
        server.headersTimeout = timeouts.headers;
      }
      handle = (req, res) =>
        void answer(req, res).catch((err: unknown) => {
          if (res.headersSent) return res.destroy();
          const refusal = err instanceof Refused ? err.refusal : refusalOf?.(err);
          replyOutcome(res, refusal ?? refuse(500, `${name} failed: ${(err as Error).message}`, CODES.bindingFailed));
        });
      for (const [req, res] of waiting.splice(0)) handle(req, res);
      return { address, close };
    },
  };
}

/** Serves `route` on a loopback port: the one taken beforehand (`socket`), or a new one. */
export async function serveBinding(options: BindingOptions, route: BindingRoute, socket?: BindingSocket): Promise<BindingServer> {
  return (socket ?? (await bindingSocket())).serve(options, route);
}
