import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CODE_TOKEN_HEADER, CodeSearchRequest, FilesQuery, OutlineQuery, ReadQuery, type CodeRoot, type FilesPage } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { codeHostRoute } from "../code-host/routes.js";
import { gitRoute } from "../git/routes.js";
import type { Worktrees } from "../git/worktrees.js";
import type { HostClients } from "../code-host/clients.js";
import { readJson, reply, replyOutcome } from "../http.js";
import { fenced, type RootEntry } from "./fence.js";
import { GitFailed, headOf, trackedFiles } from "./git.js";
import { globMatcher, GlobInvalid } from "./glob.js";
import { outline } from "./outline.js";
import { readLines } from "./read.js";
import { search, type RgSpawner } from "./search.js";

const FILES_PAGE = 1000;

export interface CodeService {
  /** host:port, for the worker's CODE binding. */
  address: string;
  close(): Promise<void>;
}

async function files(root: RootEntry, q: FilesQuery): Promise<Outcome<FilesPage>> {
  const dir = await fenced(root, q.path ?? "");
  if (!dir.ok) return dir;
  const tracked = await trackedFiles(root.path, dir.value.rel);
  if (tracked === null) return refuse(409, `root ${root.name} is not a git checkout: its tracked files cannot be listed`, CODES.codeRootNotGit);
  const match = q.glob ? globMatcher(q.glob) : () => true;
  const after = q.cursor ?? "";
  const limit = q.limit ?? FILES_PAGE;
  const page: string[] = [];
  let more = false;
  for (const f of tracked) {
    if (f <= after || !match(f)) continue;
    if (page.length === limit) {
      more = true;
      break;
    }
    page.push(f);
  }
  return ok({ root: root.name, path: dir.value.rel, files: page, nextCursor: more ? page.at(-1)! : null, commit: (await headOf(root.path)).head });
}

/**
 * The CODE binding, served by the front (docs/code.md): the registered repositories, read
 * with git, ripgrep and tree-sitter on this machine, and the code host's pull requests
 * (docs/code-host.md). Only the worker, which holds this boot's token, may ask: it
 * decides who reads what.
 */
export async function startCodeService(roots: RootEntry[], token: string, spawnRg: RgSpawner, codeHost: HostClients, worktrees: Worktrees): Promise<CodeService> {
  const byName = new Map(roots.map((r) => [r.name, r]));
  const rootOf = (name: string): Outcome<RootEntry> =>
    byName.get(name) ? ok(byName.get(name)!) : refuse(404, `no code root ${name}`, CODES.codeRootNotFound, { roots: roots.map((r) => r.name) });

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://code");
    if (req.headers[CODE_TOKEN_HEADER] !== token) return reply(res, 403, { error: "the code service answers the runtime's worker only" });
    if (url.pathname.startsWith("/github/")) {
      const answered = await codeHostRoute(codeHost, req.method ?? "GET", url, () => readJson(req));
      return answered ? replyOutcome(res, answered) : reply(res, 404, { error: `no code-host route ${req.method} ${url.pathname}`, code: CODES.routeNotFound });
    }
    if (url.pathname.startsWith("/git/")) {
      const answered = await gitRoute(worktrees, req.method ?? "GET", url, () => readJson(req));
      return answered ? replyOutcome(res, answered) : reply(res, 404, { error: `no git route ${req.method} ${url.pathname}`, code: CODES.routeNotFound });
    }
    const query = Object.fromEntries(url.searchParams);
    if (req.method === "GET" && url.pathname === "/roots") {
      const listed: CodeRoot[] = await Promise.all(roots.map(async (r) => ({ ...r, ...(await headOf(r.path)) })));
      return reply(res, 200, { roots: listed });
    }
    const parsed =
      req.method === "POST" && url.pathname === "/search"
        ? CodeSearchRequest.safeParse(await readJson(req))
        : req.method === "GET" && url.pathname === "/files"
          ? FilesQuery.safeParse(query)
          : req.method === "GET" && url.pathname === "/read"
            ? ReadQuery.safeParse(query)
            : req.method === "GET" && url.pathname === "/outline"
              ? OutlineQuery.safeParse(query)
              : null;
    if (!parsed) return reply(res, 404, { error: `no code route ${req.method} ${url.pathname}`, code: CODES.routeNotFound });
    if (!parsed.success)
      return reply(res, 400, { error: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "), code: url.pathname === "/search" ? CODES.invalidBody : CODES.invalidQuery });
    if (url.pathname === "/search") {
      const q = parsed.data as CodeSearchRequest;
      const picked: RootEntry[] = [];
      for (const name of q.roots ?? (q.root === undefined ? roots.map((r) => r.name) : [q.root])) {
        const root = rootOf(name);
        if (!root.ok) return replyOutcome(res, root);
        picked.push(root.value);
      }
      return replyOutcome(res, await search(picked, q, spawnRg));
    }
    const q = parsed.data as FilesQuery & ReadQuery & OutlineQuery;
    const root = rootOf(q.root);
    if (!root.ok) return replyOutcome(res, root);
    if (url.pathname === "/files") return replyOutcome(res, await files(root.value, q));
    if (url.pathname === "/read") return replyOutcome(res, await readLines(root.value, q));
    return replyOutcome(res, await outline(root.value, q));
  };

  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      // git that cannot answer for a checkout (a foreign owner, a timeout) is refused, never read past.
      if (err instanceof GitFailed) return replyOutcome(res, refuse(503, err.message, CODES.codeGitFailed));
      if (err instanceof GlobInvalid) return replyOutcome(res, refuse(400, err.message, CODES.codeGlobInvalid));
      reply(res, 500, { error: `the code service failed: ${(err as Error).message}`, code: CODES.internal });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
