import type { IncomingMessage } from "node:http";
import { CODE_TOKEN_HEADER, CodeSearchRequest, FilesQuery, OutlineQuery, ReadQuery, type CodeRoot, type FilesPage } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { codeHostRoute } from "../code-host/routes.js";
import { gitRoute } from "../git/routes.js";
import type { Worktrees } from "../git/worktrees.js";
import type { HostClients } from "../code-host/clients.js";
import { invalid, readJson, serveBinding, type BindingSocket } from "../http.js";
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
export async function startCodeService(roots: RootEntry[], token: string, spawnRg: RgSpawner, codeHost: HostClients, worktrees: Worktrees, socket?: BindingSocket): Promise<CodeService> {
  const byName = new Map(roots.map((r) => [r.name, r]));
  const rootOf = (name: string): Outcome<RootEntry> =>
    byName.get(name) ? ok(byName.get(name)!) : refuse(404, `no code root ${name}`, CODES.codeRootNotFound, { roots: roots.map((r) => r.name) });

  const route = async (req: IncomingMessage, url: URL): Promise<Outcome<unknown>> => {
    const method = req.method ?? "GET";
    if (url.pathname.startsWith("/github/"))
      return (await codeHostRoute(codeHost, method, url, () => readJson(req))) ?? refuse(404, `no code-host route ${method} ${url.pathname}`, CODES.routeNotFound);
    if (url.pathname.startsWith("/git/")) return (await gitRoute(worktrees, method, url, () => readJson(req))) ?? refuse(404, `no git route ${method} ${url.pathname}`, CODES.routeNotFound);
    const query = Object.fromEntries(url.searchParams);
    if (method === "GET" && url.pathname === "/roots") {
      const listed: CodeRoot[] = await Promise.all(roots.map(async (r) => ({ ...r, ...(await headOf(r.path)) })));
      return ok({ roots: listed });
    }
    const parsed =
      method === "POST" && url.pathname === "/search"
        ? CodeSearchRequest.safeParse(await readJson(req))
        : method === "GET" && url.pathname === "/files"
          ? FilesQuery.safeParse(query)
          : method === "GET" && url.pathname === "/read"
            ? ReadQuery.safeParse(query)
            : method === "GET" && url.pathname === "/outline"
              ? OutlineQuery.safeParse(query)
              : null;
    if (!parsed) return refuse(404, `no code route ${method} ${url.pathname}`, CODES.routeNotFound);
    if (!parsed.success) return invalid(parsed.error, url.pathname === "/search" ? CODES.invalidBody : CODES.invalidQuery);
    if (url.pathname === "/search") {
      const q = parsed.data as CodeSearchRequest;
      const picked: RootEntry[] = [];
      for (const name of q.roots ?? (q.root === undefined ? roots.map((r) => r.name) : [q.root])) {
        const root = rootOf(name);
        if (!root.ok) return root;
        picked.push(root.value);
      }
      return search(picked, q, spawnRg);
    }
    const q = parsed.data as FilesQuery & ReadQuery & OutlineQuery;
    const root = rootOf(q.root);
    if (!root.ok) return root;
    if (url.pathname === "/files") return files(root.value, q);
    if (url.pathname === "/read") return readLines(root.value, q);
    return outline(root.value, q);
  };

  return serveBinding(
    {
      name: "the code service",
      gate: { header: CODE_TOKEN_HEADER, token },
      // git that cannot answer for a checkout (a foreign owner, a timeout) is refused, never read past.
      refusalOf: (err) => (err instanceof GitFailed ? refuse(503, err.message, CODES.codeGitFailed) : err instanceof GlobInvalid ? refuse(400, err.message, CODES.codeGlobInvalid) : null),
    },
    (req, _res, url) => route(req, url),
    socket,
  );
}
