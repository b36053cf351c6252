/**
 * The runtime's worktrees of pull requests (docs/code-host.md, "Getting the code"): each a
 * `git clone --shared --no-checkout` of the repository's mirror, checked out at the pull
 * request's head, at `<dataDir>/git/worktrees/<id>`. It borrows the mirror's objects through
 * alternates and keeps its own refs, index and new objects in its own `.git`, so a session
 * may be handed the worktree (writable or not) and the mirror read-only, and nothing else
 * (docs/decisions.md). What each worktree is (its repository, mode, mirror) is recorded
 * apart, in `<dataDir>/git/records/<id>.json`, where its session cannot rewrite it.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { PullRef } from "../../../src/api/code-host.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import type { LinesAnswer, LinesRequest, Worktree, WorktreeRequest } from "../../../src/api/rooms.js";
import { deadline, onHost, type HostClients } from "../code-host/clients.js";
import { git, gitRaw, GitRunFailed, Mirrors } from "./mirror.js";
import { OneAtATime } from "../one-at-a-time.js";

export type WorktreeMode = WorktreeRequest["mode"];

interface WorktreeRecord extends Worktree {
  repo: string;
  pr: number;
  mode: WorktreeMode;
  mirror: string;
}

/** The places of the runtime's git under a data directory. */
export function gitPlaces(dataDir: string) {
  const root = join(dataDir, "git");
  return { root, mirrors: join(root, "mirrors"), worktrees: join(root, "worktrees"), records: join(root, "records") };
}

/**
 * The worktree holding `path` (a session's cwd, by its real path) and the mirror it borrows
 * from, as the runtime recorded them; null when `path` is in none. Read by the sandbox for
 * each session, synchronously.
 */
export function worktreeHolding(dataDir: string, path: string): { root: string; mode: WorktreeMode; mirror: string } | null {
  const places = gitPlaces(dataDir);
  // The sandbox asks by real path; the data directory may be named through a link.
  const worktrees = existsSync(places.worktrees) ? realpathSync(places.worktrees) : places.worktrees;
  const rel = relative(worktrees, path);
  const id = rel.split(sep)[0] ?? "";
  if (rel.startsWith("..") || !/^[A-Za-z0-9_-]{1,100}$/.test(id)) return null;
  try {
    const record = JSON.parse(readFileSync(join(places.records, `${id}.json`), "utf8")) as WorktreeRecord;
    // A mirror outside the runtime's mirrors is no record of ours.
    if (relative(places.mirrors, record.mirror).startsWith("..") || (record.mode !== "review" && record.mode !== "build")) return null;
    return { root: join(worktrees, id), mode: record.mode, mirror: record.mirror };
  } catch {
    return null;
  }
}

const refusalOf = (err: unknown): Outcome<never> => {
  if (err instanceof GitRunFailed) return err.kind === "fetch" ? refuse(502, err.message, CODES.gitFetchFailed) : refuse(503, err.message, CODES.codeGitFailed);
  throw err;
};

export class Worktrees {
  readonly #places: ReturnType<typeof gitPlaces>;
  readonly #mirrors: Mirrors;
  /** One change at a time per worktree id. */
  readonly #changes = new OneAtATime();

  constructor(
    dataDir: string,
    private readonly clients: HostClients,
    codeRoots: () => string[],
  ) {
    this.#places = gitPlaces(dataDir);
    this.#mirrors = new Mirrors(this.#places.mirrors, codeRoots);
  }

  async #record(id: string): Promise<WorktreeRecord | null> {
    try {
      return JSON.parse(await readFile(join(this.#places.records, `${id}.json`), "utf8")) as WorktreeRecord;
    } catch {
      return null;
    }
  }

  async #write(record: WorktreeRecord): Promise<void> {
    await mkdir(this.#places.records, { recursive: true });
    const file = join(this.#places.records, `${record.id}.json`);
    await writeFile(`${file}.tmp`, JSON.stringify(record));
    await rename(`${file}.tmp`, file);
  }

  /**
   * Fetches the pull request into the mirror and makes worktree `id` at its head, or moves
   * a review worktree to the new head (a new round after a push). A build worktree that
   * exists is its session's work: it is answered as it is, never moved.
   */
  ensure(req: WorktreeRequest): Promise<Outcome<Worktree>> {
    return this.#changes.run(req.id, () => this.#ensure(req).catch(refusalOf));
  }

  async #ensure(req: WorktreeRequest): Promise<Outcome<Worktree>> {
    const [owner, name] = req.repo.split("/") as [string, string];
    const existing = await this.#record(req.id);
    if (existing && existing.mode !== req.mode)
      return refuse(409, `worktree ${req.id} is a ${existing.mode} worktree, not a ${req.mode} one`, CODES.worktreeModeMismatch, { mode: existing.mode });
    const client = this.clients.forOwner(owner);
    if (!client.ok) return client;
    const pull = await onHost(client.value, `pull request ${req.repo}#${req.pr}`, (o) => o.rest.pulls.get({ owner, repo: name, pull_number: req.pr, ...deadline() }));
    if (!pull.ok) return pull;
    const p = pull.value.data;
    const cloneUrl = p.base.repo.clone_url;
    // git takes a URL led by `-` as an option, and `ext::` and `file:` reach past the network: only http(s) is fetched from.
    if (!/^https?:\/\/[^\s]+$/.test(cloneUrl ?? "")) return refuse(502, `the code host gave ${req.repo} a clone URL the runtime does not fetch from: ${JSON.stringify(cloneUrl).slice(0, 200)}`, CODES.gitFetchFailed);
    // A review worktree already at the pull request's head and base needs no fetch: its session cannot have changed it.
    const path = join(this.#places.worktrees, req.id);
    if (existing?.mode === "review" && existing.head.sha === p.head.sha && existing.base.sha === p.base.sha && (await stat(join(path, ".git")).then(() => true, () => false)))
      return ok(publicOf(existing));
    const auth = (await client.value.octokit.auth()) as { token?: string };
    const fetched = await this.#mirrors.fetch({
      repo: req.repo,
      cloneUrl,
      token: auth.token ?? "",
      refspecs: [`+refs/pull/${req.pr}/head:refs/pull/${req.pr}/head`, `+refs/heads/${p.base.ref}:refs/heads/${p.base.ref}`],
      baseSha: p.base.sha,
    });
    const mirror = fetched.dir;
    // What was fetched is what is checked out: the head may have moved since the code host was asked.
    const head: PullRef = { ref: p.head.ref, sha: await git(mirror, ["rev-parse", "--verify", `refs/pull/${req.pr}/head^{commit}`]) };
    const hasBase = await git(mirror, ["cat-file", "-e", `${p.base.sha}^{commit}`]).then(() => true, () => false);
    const base: PullRef = { ref: p.base.ref, sha: hasBase ? p.base.sha : await git(mirror, ["rev-parse", "--verify", `refs/heads/${p.base.ref}^{commit}`]) };
    const record: WorktreeRecord = { id: req.id, path, head, base, reference: fetched.reference, repo: req.repo, pr: req.pr, mode: req.mode, mirror };
    const made = await stat(join(path, ".git")).then(() => true, () => false);
    if (existing && existing.mirror === mirror && made) {
      if (req.mode === "build") return ok(publicOf({ ...existing, base, reference: fetched.reference }));
      await git(path, ["checkout", "-q", "-f", "--detach", head.sha]);
      await this.#write(record);
      return ok(publicOf(record));
    }
    await rm(path, { recursive: true, force: true });
    await mkdir(this.#places.worktrees, { recursive: true });
    // The record first: a worktree on disk always has one, so the sandbox knows what it is.
    await this.#write(record);
    await git(this.#places.worktrees, ["clone", "-q", "--shared", "--no-checkout", mirror, req.id]);
    if (req.mode === "review") await git(path, ["checkout", "-q", "--detach", head.sha]);
    else {
      const branch = await git(path, ["check-ref-format", "--branch", head.ref]).catch(() => `pr-${req.pr}`);
      await git(path, ["checkout", "-q", "-b", branch, head.sha]);
      // A build thread commits; who it commits as, unless its session says otherwise.
      await git(path, ["config", "user.name", "agent-runtime"]);
      await git(path, ["config", "user.email", "agent-runtime@localhost"]);
    }
    return ok(publicOf(record));
  }

  /** Removes worktree `id` and its record; a worktree that is not there is removed already. */
  remove(id: string): Promise<Outcome<{ id: string; removed: boolean }>> {
    return this.#changes.run(id, async () => {
      const had = (await this.#record(id)) !== null;
      await rm(join(this.#places.worktrees, id), { recursive: true, force: true });
      await rm(join(this.#places.records, `${id}.json`), { force: true });
      return ok({ id, removed: had });
    });
  }

  /** The code at each line, read from the mirror (which no session writes): the head's file for RIGHT, the base's for LEFT. */
  async lines(req: LinesRequest): Promise<Outcome<LinesAnswer>> {
    const record = await this.#record(req.id);
    if (!record) return refuse(404, `no worktree ${req.id}`, CODES.worktreeNotFound);
    const wanted = req.lines.map((l) => `${l.side === "LEFT" ? req.base : req.head}:${l.path}`);
    const files = await blobs(record.mirror, wanted);
    const texts = req.lines.map((l, i) => {
      const lines = files.get(wanted[i]!) ?? null;
      // A file ending in a newline has no line after it.
      const count = lines === null ? 0 : lines.at(-1) === "" ? lines.length - 1 : lines.length;
      return lines && l.line <= count ? lines[l.line - 1]! : null;
    });
    return ok({ texts });
  }
}

/**
 * Each `<sha>:<path>` that names a file, as its lines, read by one `cat-file --batch`
 * (names on stdin, where none passes for an option); a name git lacks, or that is no file, is absent.
 */
async function blobs(mirror: string, names: string[]): Promise<Map<string, string[]>> {
  const asked = [...new Set(names)].filter((n) => !/[\r\n]/.test(n));
  const found = new Map<string, string[]>();
  if (asked.length === 0) return found;
  const out = await gitRaw(mirror, ["cat-file", "--batch"], { input: asked.map((n) => `${n}\n`).join("") });
  let at = 0;
  for (const name of asked) {
    const end = out.indexOf(10, at);
    if (end === -1) break;
    const [, type, size] = out.subarray(at, end).toString("utf8").split(" ");
    at = end + 1;
    if (size === undefined || !/^\d+$/.test(size)) continue;
    const bytes = Number(size);
    if (type === "blob") found.set(name, out.subarray(at, at + bytes).toString("utf8").split("\n"));
    at += bytes + 1;
  }
  return found;
}

function publicOf(r: WorktreeRecord): Worktree {
  return { id: r.id, path: r.path, head: r.head, base: r.base, reference: r.reference };
}
