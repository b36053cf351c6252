/**
 * The runtime's mirror of a repository (docs/code-host.md, "Getting the code"): a bare
 * repository under the data directory, fetched from the code host's clone URL with the
 * code-host account's token. The token goes to git in the child's environment as an HTTP
 * header scoped to that URL, never into a remote's URL, a config file or a log. git runs
 * without a shell, with a deadline, without the caller's GIT_* variables or the user's git
 * configuration (a `url.insteadOf` or a credential helper there would send the fetch, or the
 * token, elsewhere). One fetch at a time per mirror.
 */
import { execFile } from "node:child_process";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { OneAtATime } from "../one-at-a-time.js";

const FETCH_TIMEOUT_MS = 10 * 60_000;
const LOCAL_TIMEOUT_MS = 60_000;
const MAX_OUTPUT = 64 * 1024 * 1024;

/** git failed: `fetch` when the code host could not be fetched from, `local` for git on this machine. */
export class GitRunFailed extends Error {
  constructor(
    message: string,
    readonly kind: "fetch" | "local",
  ) {
    super(message);
  }
}

function gitEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")));
  return { ...env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "/bin/false", ...extra };
}

/** One git call; its stdout as a Buffer. Hooks and fsmonitor off: the runtime's git runs no code of a repository's. */
export function gitRaw(cwd: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number; kind?: GitRunFailed["kind"]; input?: string } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "credential.helper=", ...args],
      { cwd, env: gitEnv(options.env ?? {}), timeout: options.timeoutMs ?? LOCAL_TIMEOUT_MS, maxBuffer: MAX_OUTPUT, encoding: "buffer" },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const said = stderr.toString("utf8").trim().split("\n").filter((l) => l.trim() !== "").at(-1) ?? "";
        const why = err.killed ? `no answer in ${(options.timeoutMs ?? LOCAL_TIMEOUT_MS) / 1000} s` : said || err.message.split("\n")[0]!;
        reject(new GitRunFailed(`git ${args.find((a) => !a.startsWith("-") && !a.includes("=")) ?? ""} failed: ${why}`, options.kind ?? "local"));
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
  });
}

export const git = async (cwd: string, args: string[], options: Parameters<typeof gitRaw>[2] = {}): Promise<string> => (await gitRaw(cwd, args, options)).toString("utf8").trim();

const exists = (path: string) => stat(path).then(
  () => true,
  () => false,
);

/** The `owner/name` a remote URL names (https, ssh or scp-like), lowercased; null when it names none. */
export function slugOfUrl(url: string): string | null {
  const m = /^(?:[a-z+]+:\/\/(?:[^@/]+@)?[^/]+\/|[^@:/]+@[^:]+:)([^/]+)\/([^/]+?)(?:\.git)?\/?$/i.exec(url.trim());
  return m ? `${m[1]}/${m[2]}`.toLowerCase() : null;
}

export interface FetchOrder {
  /** `owner/name`. */
  repo: string;
  cloneUrl: string;
  token: string;
  /** Refspecs, each `+src:dst`. */
  refspecs: string[];
  /** A commit a registered checkout of the repository would have (the pull request's base), to find a reference. */
  baseSha: string;
}

export interface Fetched {
  dir: string;
  /** The registered checkout that served as the mirror's reference when it was first fetched, or null. */
  reference: string | null;
}

/** The mirrors of one data directory, and the registered checkouts that may serve as their reference. */
export class Mirrors {
  /** One fetch at a time per mirror. */
  readonly #fetches = new OneAtATime();

  constructor(
    readonly root: string,
    private readonly codeRoots: () => string[],
  ) {}

  dirOf(repo: string): string {
    const [owner, name] = repo.toLowerCase().split("/") as [string, string];
    return join(this.root, owner, `${name}.git`);
  }

  /** Fetches `order.refspecs` into the mirror, making it on its first fetch. */
  fetch(order: FetchOrder): Promise<Fetched> {
    return this.#fetches.run(this.dirOf(order.repo), () => this.#fetch(order));
  }

  async #fetch(order: FetchOrder): Promise<Fetched> {
    const dir = this.dirOf(order.repo);
    const fresh = !(await exists(join(dir, "HEAD")));
    let reference: { root: string; objects: string } | null = null;
    if (fresh) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await git(dir, ["init", "-q", "--bare", "."]);
      // The worktrees borrow the mirror's objects (clone --shared): a gc here must never drop one of them.
      await git(dir, ["config", "gc.auto", "0"]);
      reference = await this.#reference(order);
      if (reference) await writeFile(join(dir, "objects", "info", "alternates"), `${reference.objects}\n`);
    }
    // The header only for the clone URL and below; the URL itself stays bare.
    const header = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: `http.${order.cloneUrl}.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${order.token}`).toString("base64")}` };
    try {
      await git(dir, ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", order.cloneUrl, ...order.refspecs], { env: header, timeoutMs: FETCH_TIMEOUT_MS, kind: "fetch" });
    } catch (err) {
      if (fresh) await rm(dir, { recursive: true, force: true });
      throw err;
    }
    if (fresh && reference) {
      // Dissociated at once, as `clone --dissociate`: the checkout is the user's, and its gc may drop what the mirror borrowed.
      await git(dir, ["repack", "-a", "-d", "-q"], { timeoutMs: FETCH_TIMEOUT_MS });
      await rm(join(dir, "objects", "info", "alternates"), { force: true });
      await git(dir, ["config", "runtime.reference", reference.root]);
    }
    return { dir, reference: (await git(dir, ["config", "--get", "runtime.reference"]).catch(() => "")) || null };
  }

  /**
   * The objects of a registered checkout of the same repository: its `origin` names the same
   * `owner/name`, or it has the pull request's base commit. Null when none does.
   */
  async #reference(order: FetchOrder): Promise<{ root: string; objects: string } | null> {
    for (const root of this.codeRoots()) {
      const origin = await git(root, ["config", "--get", "remote.origin.url"]).catch(() => "");
      const same = slugOfUrl(origin) === order.repo.toLowerCase() || (await git(root, ["cat-file", "-e", `${order.baseSha}^{commit}`]).then(() => true, () => false));
      if (!same) continue;
      const common = await git(root, ["rev-parse", "--git-common-dir"]).catch(() => "");
      if (!common) continue;
      const objects = join(isAbsolute(common) ? common : join(root, common), "objects");
      if (await exists(objects)) return { root, objects };
    }
    return null;
  }
}
