/**
 * A seed repository's real checkout: where its branches point and what a pull request
 * changes there. git runs without a shell, with a deadline, and without the caller's GIT_*
 * variables, which could point it at another repository or another configuration.
 */
import { execFile } from "node:child_process";
import { countChanges, patchOf, splitPerFile, type Comparison, type DiffFile, type FileStatus } from "./patch.js";

const TIMEOUT_MS = 15_000;
const MAX_OUTPUT = 32 * 1024 * 1024;
/** Distinct (base, head) pairs kept; a branch that moves leaves its old pair behind. */
const CACHE_SIZE = 64;

const STATUS: Record<string, FileStatus> = { A: "added", D: "removed", M: "modified", R: "renamed", C: "copied", T: "changed" };

/** git could not answer: a bad range (`refused`), a diff past the output cap, or git itself failing to run. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly kind: "refused" | "too-large" | "broken",
  ) {
    super(message);
  }
}

function gitEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")));
}

function git(dir: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile("git", ["-c", "core.quotepath=off", ...args], { cwd: dir, env: gitEnv(), timeout: TIMEOUT_MS, maxBuffer: MAX_OUTPUT, encoding: "utf8" }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      if (err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return reject(new GitError(`git ${args[0]} printed more than ${MAX_OUTPUT} bytes`, "too-large"));
      const said = stderr.trim().split("\n")[0] ?? "";
      if (typeof err.code === "number") return reject(new GitError(said || `git ${args[0]} exited ${err.code}`, "refused"));
      reject(new GitError(`git ${args[0]} failed: ${err.killed ? `no answer in ${TIMEOUT_MS} ms` : err.message}`, "broken"));
    });
    child.stdin?.on("error", () => {});
    child.stdin?.end(input ?? "");
  });
}

export class GitRepo {
  readonly #comparisons = new Map<string, Promise<Comparison>>();

  constructor(readonly dir: string) {}

  /** Fails when `dir` is no git repository, so a wrong seed shows at start, not on the first diff. */
  async check(): Promise<void> {
    await git(this.dir, ["rev-parse", "--git-dir"]);
  }

  /**
   * The commit each of `refs` (branch names, tags, shas) names now, null for those the
   * repository lacks. One `cat-file` for all of them: the names go in on stdin, where none
   * can pass for an option.
   */
  async resolve(refs: string[]): Promise<Map<string, string | null>> {
    const names = [...new Set(refs)].filter((r) => r !== "" && !/[\r\n]/.test(r));
    const found = new Map<string, string | null>(refs.map((r) => [r, null]));
    if (names.length === 0) return found;
    const out = (await git(this.dir, ["cat-file", "--batch-check=%(objectname)"], names.map((n) => `${n}^{commit}\n`).join(""))).split("\n");
    names.forEach((name, i) => found.set(name, /^[0-9a-f]{40,64}$/.test(out[i] ?? "") ? out[i]! : null));
    return found;
  }

  /** What `head` changes since it left `base` (GitHub's three-dot diff), cached by the two commits. */
  compare(base: string, head: string): Promise<Comparison> {
    const key = `${base}...${head}`;
    let comparison = this.#comparisons.get(key);
    if (!comparison) {
      comparison = this.#compare(base, head);
      comparison.catch(() => this.#comparisons.delete(key));
      this.#comparisons.set(key, comparison);
      if (this.#comparisons.size > CACHE_SIZE) this.#comparisons.delete(this.#comparisons.keys().next().value!);
    }
    return comparison;
  }

  async #compare(base: string, head: string): Promise<Comparison> {
    const range = `${base}...${head}`;
    // The diff for `.diff`, as `git diff` prints it; the raw listing beside it names each
    // file unambiguously (no quoting) with its full blob ids, in the same order.
    const [diff, raw, count] = await Promise.all([
      git(this.dir, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--src-prefix=a/", "--dst-prefix=b/", range, "--"]),
      git(this.dir, ["diff", "--raw", "-z", "--no-abbrev", "-M", range, "--"]),
      git(this.dir, ["rev-list", "--count", `${base}..${head}`]),
    ]);
    const entries = parseRaw(raw);
    const parts = splitPerFile(diff);
    if (parts.length !== entries.length) throw new GitError(`git listed ${entries.length} files but printed ${parts.length} diffs for ${range}`, "broken");
    const files = entries.map((entry, i): DiffFile => {
      const patch = patchOf(parts[i]!);
      return { ...entry, ...countChanges(patch), ...(patch === undefined ? {} : { patch }) };
    });
    return { diff, files, commits: Number(count.trim()) };
  }
}

/** `git diff --raw -z`: `:<modes> <old blob> <new blob> <status>\0<path>\0`, with a second path for a rename or copy. */
function parseRaw(raw: string): Omit<DiffFile, "additions" | "deletions" | "patch">[] {
  const fields = raw.split("\0");
  const entries: Omit<DiffFile, "additions" | "deletions" | "patch">[] = [];
  for (let i = 0; i < fields.length - 1; ) {
    const [, , oldSha, newSha, code] = fields[i++]!.slice(1).split(" ");
    const status = STATUS[code?.[0] ?? ""] ?? "modified";
    const sha = status === "removed" ? oldSha! : newSha!;
    if (status === "renamed" || status === "copied") {
      const previousFilename = fields[i++]!;
      entries.push({ filename: fields[i++]!, previousFilename, status, sha });
    } else entries.push({ filename: fields[i++]!, status, sha });
  }
  return entries;
}
