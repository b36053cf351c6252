/**
 * git's smart HTTP for the seed repositories that have a checkout, as github.com serves it
 * beside its API: `GET /<owner>/<repo>.git/info/refs?service=git-upload-pack` and
 * `POST /<owner>/<repo>.git/git-upload-pack`, answered by the real `git upload-pack`, so a
 * clone or fetch against the simulator is a real one. Fetch only: a push is refused as
 * GitHub refuses a token without push rights. Credentials as git sends them to GitHub: HTTP
 * Basic, the token as the password (any username).
 */
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createGunzip } from "node:zlib";
import type { Grant, Repo, Store } from "./store.js";

/** A fetch of a seed repository is small; the deadline stops an upload-pack that hangs. */
const UPLOAD_PACK_TIMEOUT_MS = 120_000;

const GIT_PATH = /^\/([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9_.-]{1,100})\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** The token of `Authorization: Basic`: the password, or the username when the password is empty or GitHub's `x-oauth-basic`. */
function basicToken(header: string | undefined): string | null {
  const encoded = /^basic\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
  if (!encoded) return null;
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon === -1) return decoded || null;
  const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  return password && password !== "x-oauth-basic" ? password : user || null;
}

function gitEnv(protocol: string | undefined): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")));
  // Protocol v2 is asked for in a header; git passes it to upload-pack this way.
  if (protocol && /^[A-Za-z0-9=:.,-]{1,100}$/.test(protocol)) env.GIT_PROTOCOL = protocol;
  return env;
}

function text(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}

/** Runs git on the repository's checkout, no shell, no caller's GIT_*, with a deadline; resolves with its stdout. */
function git(dir: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd: dir, env: gitEnv(undefined), stdio: ["pipe", "pipe", "pipe"], timeout: UPLOAD_PACK_TIMEOUT_MS });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`git ${args[0]} exited ${code}: ${err.trim()}`))));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/**
 * GitHub keeps `refs/pull/<n>/head` at each pull request's head branch tip, server-side;
 * so does this, before each answer (with protocol v2 the refs are listed in the POST, not
 * the advertisement). One update at a time per repository. A pull whose branch is gone
 * keeps its ref where it was, as on GitHub.
 */
const updating = new Map<Repo, Promise<void>>();
function pullRefs(repo: Repo): Promise<void> {
  const previous = updating.get(repo) ?? Promise.resolve();
  const next = previous.then(async () => {
    const pulls = [...repo.pulls.values()];
    if (pulls.length === 0 || !repo.git) return;
    const tips = await repo.git.resolve(pulls.map((p) => `refs/heads/${p.head}`));
    const updates = pulls.flatMap((p) => {
      const sha = tips.get(`refs/heads/${p.head}`);
      return sha ? [`update refs/pull/${p.number}/head ${sha}\n`] : [];
    });
    if (updates.length) await git(repo.git.dir, ["update-ref", "--stdin"], updates.join(""));
  });
  const settled = next.catch(() => {});
  updating.set(repo, settled);
  return next;
}

type Access = { repo: Repo; grant: Grant | null } | { status: number; message: string; headers?: Record<string, string> };

const CHALLENGE = { "www-authenticate": 'Basic realm="GitHub"' };

/** Who may fetch: anyone a public repository, a token that sees it a private one; GitHub's answers otherwise. */
function access(store: Store, owner: string, name: string, authorization: string | undefined): Access {
  const token = basicToken(authorization);
  const grant = token === null ? null : (store.grant(token) ?? null);
  if (token !== null && !grant) return { status: 401, message: "Invalid username or token. Password authentication is not supported for Git operations.\n", headers: CHALLENGE };
  const repo = store.repo(owner, name);
  // A public repository is fetched by anyone, a token of any owner too (GitHub's tokens all read public repositories).
  const visible = repo && (!repo.private || (grant !== null && store.visible(repo, grant)));
  // Without credentials a missing or private repository asks for them, so its existence is not told.
  if (!visible && !grant) return { status: 401, message: "Authentication required\n", headers: CHALLENGE };
  if (!visible || !repo.git) return { status: 404, message: "Repository not found.\n" };
  return { repo, grant };
}

/**
 * Answers the request when it is one of git's (a path under `<owner>/<repo>.git/`) and
 * returns true; false leaves it to the API.
 */
export function serveGit(req: IncomingMessage, res: ServerResponse, store: Store): boolean {
  const url = new URL(req.url ?? "/", "http://simulator");
  const m = GIT_PATH.exec(url.pathname);
  if (!m) return false;
  const [, owner, name, what] = m as unknown as [string, string, string, string];
  const service = what === "info/refs" ? url.searchParams.get("service") : what;
  const allowed = (what === "info/refs" && req.method === "GET") || (what !== "info/refs" && req.method === "POST");
  if (!allowed || (service !== "git-upload-pack" && service !== "git-receive-pack")) {
    req.resume();
    text(res, 403, "Smart HTTP only: ask for service=git-upload-pack\n");
    return true;
  }
  const found = access(store, owner, name, req.headers.authorization);
  if ("status" in found) {
    req.resume();
    text(res, found.status, found.message, found.headers);
    return true;
  }
  if (service === "git-receive-pack") {
    req.resume();
    text(res, 403, `Permission to ${found.repo.owner}/${found.repo.name}.git denied to ${found.grant?.login ?? "anonymous"}.\n`);
    return true;
  }
  void uploadPack(req, res, found.repo, what === "info/refs");
  return true;
}

async function uploadPack(req: IncomingMessage, res: ServerResponse, repo: Repo, advertise: boolean): Promise<void> {
  try {
    await pullRefs(repo);
  } catch (err) {
    req.resume();
    return text(res, 500, `could not update the pull request refs: ${(err as Error).message}\n`);
  }
  const protocol = req.headers["git-protocol"];
  const child = spawn("git", ["upload-pack", "--stateless-rpc", ...(advertise ? ["--advertise-refs"] : []), "."], {
    cwd: repo.git!.dir,
    env: gitEnv(typeof protocol === "string" ? protocol : undefined),
    stdio: ["pipe", "pipe", "ignore"],
    timeout: UPLOAD_PACK_TIMEOUT_MS,
  });
  const kind = advertise ? "advertisement" : "result";
  res.writeHead(200, { "content-type": `application/x-git-upload-pack-${kind}`, "cache-control": "no-cache" });
  // The advertisement of the smart protocol starts with the service's name, as http-backend writes it.
  if (advertise) res.write("001e# service=git-upload-pack\n0000");
  child.stdout.pipe(res);
  child.on("error", () => res.destroy());
  child.on("close", (code) => {
    if (code !== 0) res.destroy();
  });
  res.on("close", () => child.kill());
  child.stdin.on("error", () => {});
  if (advertise) return void (req.resume(), child.stdin.end());
  const body = /gzip/i.test(String(req.headers["content-encoding"] ?? "")) ? req.pipe(createGunzip()) : req;
  body.on("error", () => child.kill());
  body.pipe(child.stdin);
}
