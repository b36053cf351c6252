/**
 * A stand-in for api.github.com on loopback: GitHub's REST v3 endpoints for repositories,
 * pull requests and what hangs off them, stateful, answering as GitHub does (status, JSON,
 * headers, paging, rate limit), so a client like Octokit runs against it unchanged.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serveGit } from "./git-http.js";
import { badCredentials, GitHubError, notFound, payloadTooLarge, problemsParsingJson } from "./errors.js";
import { headersOf, RateLimits, type LimitKind } from "./rate-limit.js";
import { anchorSeedChecks } from "./commits.js";
import { route, type Answer } from "./routes.js";
import type { Seed } from "./seed.js";
import { rateLimit } from "./shapes.js";
import { Store, type Access } from "./store.js";
import { readBody, type Body } from "../simulator/body.js";

// The front's composition root (local-front/code-host.ts) reads the seed file it starts this from, and imports nothing else of the simulator.
export { Seed, SeedRepo } from "./seed.js";

export interface CodeHostSimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Already parsed by `Seed.parse`. */
  seed: Seed;
}

export interface CodeHostSimulator {
  /** e.g. http://127.0.0.1:41234, without a trailing slash: Octokit's `baseUrl`. */
  url: string;
  port: number;
  /** Accept another token (the runtime registers a random one when it runs the simulator itself); `access` is `write` unless given. */
  addToken(token: string, grant: { login: string; owners?: string[]; access?: Access }): void;
  /**
   * Until `untilMs` (epoch ms), refuse every request with this token (or every token, for
   * "*") as GitHub refuses a rate-limited caller: by its primary limit (the default) or a
   * secondary one.
   */
  rateLimit(token: string | "*", untilMs: number, kind?: LimitKind): void;
  close(): Promise<void>;
}

/** Comments and reviews are small; the cap only stops runaway uploads. */
const BODY_LIMIT = 1024 * 1024;


function bearer(header: string | undefined): string | null {
  return /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header ?? "")?.[1] ?? null;
}

/** The origin the client called, for the absolute URLs in bodies and `Link`; the listening address when the Host header is unusable. */
function originOf(req: IncomingMessage, fallback: string): string {
  const host = req.headers.host;
  const usable = host && /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host) && URL.canParse(`http://${host}`);
  return usable ? `http://${host}` : fallback;
}

/** Path segments, decoded; null for a path that does not decode (a 404, as GitHub answers it). */
function segmentsOf(pathname: string): string[] | null {
  try {
    return pathname.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return null;
  }
}

interface Sim {
  store: Store;
  limits: RateLimits;
  url: string;
}

/** Answers one request; `headers` collects what every answer carries, as soon as it is known. */
async function respond(req: IncomingMessage, body: Body, sim: Sim, headers: Record<string, string>): Promise<Answer> {
  const api = originOf(req, sim.url);
  const url = new URL(req.url ?? "/", api);
  const token = bearer(req.headers.authorization);
  const grant = token === null ? undefined : sim.store.grant(token);
  if (token === null || !grant) {
    Object.assign(headers, headersOf(sim.limits.quota("")));
    throw badCredentials();
  }
  // Asking for the rate limit costs nothing and works while limited, as on GitHub.
  if (url.pathname === "/rate_limit" && req.method === "GET") {
    const quota = sim.limits.quota(token);
    Object.assign(headers, headersOf(quota));
    return { status: 200, json: rateLimit(quota) };
  }
  Object.assign(headers, sim.limits.take(token, sim.store.userId(grant.login)));
  const segments = segmentsOf(url.pathname);
  const found = segments && route(req.method ?? "", segments);
  if (!found) throw notFound();
  if ("tooLarge" in body) throw payloadTooLarge(BODY_LIMIT);
  const json = () => {
    if (body.text.trim() === "") return {};
    try {
      return JSON.parse(body.text) as unknown;
    } catch {
      throw problemsParsingJson();
    }
  };
  return found.handle({ view: { api, store: sim.store }, grant, url, accept: String(req.headers.accept ?? ""), params: found.params, json });
}

function write(res: ServerResponse, answer: Answer, headers: Record<string, string>): void {
  if (res.destroyed || res.headersSent) return;
  const isJson = "json" in answer;
  const text = isJson ? JSON.stringify(answer.json) : answer.text;
  res.writeHead(answer.status, {
    ...headers,
    "x-github-media-type": "github.v3; format=json",
    ...answer.headers,
    "content-type": isJson ? "application/json; charset=utf-8" : answer.contentType,
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

async function serve(req: IncomingMessage, res: ServerResponse, sim: Sim): Promise<void> {
  const headers: Record<string, string> = { "x-github-request-id": randomBytes(10).toString("hex").toUpperCase().replace(/(.{4})(.{4})(.{4})(.{8})/, "$1:$2:$3:$4"), "x-github-api-version-selected": "2022-11-28" };
  const body = await readBody(req, BODY_LIMIT);
  let answer: Answer;
  try {
    answer = await respond(req, body, sim, headers);
  } catch (err) {
    // A GitHubError is an answer like any other; anything else is the simulator's own bug.
    const known = err instanceof GitHubError ? err : new GitHubError(500, `code-host simulator error: ${err instanceof Error ? err.message : String(err)}`);
    answer = { status: known.status, json: known.body, headers: known.headers };
  }
  write(res, answer, headers);
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startCodeHostSimulator(options: CodeHostSimulatorOptions): Promise<CodeHostSimulator> {
  const host = options.host ?? "127.0.0.1";
  const store = new Store(options.seed);
  await Promise.all(
    store.gitRepos().map((git) =>
      git.check().catch((err: Error) => {
        throw new Error(`code-host seed: ${git.dir} is not a git repository: ${err.message}`);
      }),
    ),
  );
  for (const repo of store.repos()) await anchorSeedChecks(repo);
  const sim: Sim = { store, limits: new RateLimits(), url: "" };
  const server = createServer((req, res) => {
    if (serveGit(req, res, store)) return;
    // A broken socket must cost one request, never the server.
    serve(req, res, sim).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  sim.url = `http://${urlHost(host)}:${port}`;
  return {
    url: sim.url,
    port,
    addToken: (token, grant) => store.addToken(token, grant),
    rateLimit: (token, untilMs, kind) => sim.limits.shut(token, untilMs, kind),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would hold close() open.
        server.closeAllConnections();
      }),
  };
}
