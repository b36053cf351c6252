/**
 * The simulator's state, built from the seed and changed by the write endpoints. It lives in
 * memory only: a restart starts again from the seed. Ids come from one counter, so each is
 * unique across kinds and stays the same for the whole run.
 */
import { createHash } from "node:crypto";
import { GitRepo } from "./git-diff.js";
import type { Seed, SeedPull, SeedRepo } from "./seed.js";

/** `read`: a fine-grained token with read permissions alone (pull requests, issues, contents); `write`: read and write. */
export type Access = "read" | "write";

export interface Grant {
  login: string;
  /** Owners whose repositories the token sees; empty: every repository. */
  owners: string[];
  access: Access;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string;
}

export interface Comment {
  id: number;
  user: string;
  body: string;
  createdAt: string;
  updatedAt: string;
}

export type Side = "RIGHT" | "LEFT";

export interface ReviewComment extends Comment {
  path: string;
  /** The last line it covers, of the new file (RIGHT) or the old one (LEFT). */
  line: number;
  side: Side;
  /** A multi-line comment's first line and its side; null for one line. */
  startLine: number | null;
  startSide: Side | null;
  reviewId: number | null;
  /** null: the pull request's head when asked. */
  commitId: string | null;
  /** The comment that started its thread; null: this one starts one. */
  inReplyTo: number | null;
}

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";

export interface Review {
  id: number;
  user: string;
  state: ReviewState;
  body: string;
  submittedAt: string;
  /** null: the pull request's head when asked. */
  commitId: string | null;
}

/** A check run belongs to one commit, as on GitHub: a push leaves the runs behind on the commit before. */
export interface CheckRun {
  id: number;
  headSha: string;
  name: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  detailsUrl: string | null;
  startedAt: string;
  completedAt: string | null;
}

export interface Pull {
  id: number;
  number: number;
  title: string;
  body: string;
  user: string;
  state: "open" | "closed" | "merged";
  draft: boolean;
  head: string;
  base: string;
  createdAt: string;
  updatedAt: string;
  labels: Label[];
  files: SeedPull["files"];
  comments: Comment[];
  reviewComments: ReviewComment[];
  reviews: Review[];
  /** The first comment of each resolved review thread. */
  resolved: Set<number>;
}

export interface Repo {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  git: GitRepo | null;
  labels: Label[];
  protection: SeedRepo["protection"];
  pulls: Map<number, Pull>;
  checks: CheckRun[];
  /** The seed's checks, each for its pull request's head when the simulator starts (`anchorSeedChecks`). */
  seedChecks: { pull: Pull; runs: Omit<CheckRun, "headSha">[] }[];
  createdAt: string;
}

/** GitHub's timestamps: ISO 8601 in UTC, whole seconds. */
export function iso(when: string | number | Date): string {
  return new Date(when).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

export class Store {
  readonly #tokens = new Map<string, Grant>();
  /** Lowercased login → id: GitHub logins are case-insensitive. */
  readonly #users = new Map<string, number>();
  /** Lowercased `owner/name` → repository: GitHub's paths are case-insensitive. */
  readonly #repos = new Map<string, Repo>();
  #lastId = 0;

  constructor(seed: Seed) {
    const startedAt = iso(Date.now());
    for (const [token, grant] of Object.entries(seed.tokens)) this.addToken(token, grant);
    for (const r of seed.repos) {
      const key = `${r.owner}/${r.name}`.toLowerCase();
      if (this.#repos.has(key)) throw new Error(`code-host seed: repository ${r.owner}/${r.name} is listed twice`);
      this.userId(r.owner);
      const repo: Repo = {
        id: this.nextId(),
        owner: r.owner,
        name: r.name,
        private: r.private,
        defaultBranch: r.defaultBranch,
        git: r.git ? new GitRepo(r.git) : null,
        labels: [],
        protection: r.protection,
        pulls: new Map(),
        checks: [],
        seedChecks: [],
        createdAt: startedAt,
      };
      for (const l of r.labels) this.addLabel(repo, l.name, l.color, l.description);
      for (const p of r.pulls) {
        if (repo.pulls.has(p.number)) throw new Error(`code-host seed: ${r.owner}/${r.name} has pull request #${p.number} twice`);
        const pull = this.#pull(repo, p);
        repo.pulls.set(p.number, pull);
        const runs = p.checks.map((c) => {
          const done = c.status === "completed";
          return { id: this.nextId(), name: c.name, status: c.status, conclusion: done ? c.conclusion : null, detailsUrl: c.detailsUrl ?? null, startedAt: pull.updatedAt, completedAt: done ? pull.updatedAt : null };
        });
        if (runs.length) repo.seedChecks.push({ pull, runs });
      }
      this.#repos.set(key, repo);
    }
  }

  #pull(repo: Repo, p: SeedPull): Pull {
    const createdAt = iso(p.createdAt);
    const at = (when: string | undefined) => (when ? iso(when) : createdAt);
    const comment = (c: { user: string; body: string; createdAt?: string }): Comment => ({ id: this.nextId(), user: this.#known(c.user), body: c.body, createdAt: at(c.createdAt), updatedAt: at(c.createdAt) });
    // Each seeded review comment starts a thread of its own.
    const reviewComments = p.reviewComments.map((c): ReviewComment => ({ ...comment(c), path: c.path, line: c.line, side: c.side, startLine: null, startSide: null, reviewId: null, commitId: null, inReplyTo: null }));
    return {
      id: this.nextId(),
      number: p.number,
      title: p.title,
      body: p.body,
      user: this.#known(p.user),
      state: p.state,
      draft: p.draft,
      head: p.head,
      base: p.base,
      createdAt,
      updatedAt: at(p.updatedAt),
      // A pull request's label must exist in its repository, as on GitHub.
      labels: p.labels.map((name) => this.labelNamed(repo, name) ?? this.addLabel(repo, name)),
      files: p.files,
      comments: p.comments.map(comment),
      reviewComments,
      reviews: p.reviews.map((r) => ({ id: this.nextId(), user: this.#known(r.user), state: r.state, body: r.body, submittedAt: at(r.submittedAt), commitId: null })),
      resolved: new Set(reviewComments.filter((_, i) => p.reviewComments[i]!.resolved).map((c) => c.id)),
    };
  }

  /** Gives `login` its id now, so seeded users are numbered in seed order, whatever is asked first. */
  #known(login: string): string {
    this.userId(login);
    return login;
  }

  nextId(): number {
    return ++this.#lastId;
  }

  userId(login: string): number {
    const key = login.toLowerCase();
    let id = this.#users.get(key);
    if (id === undefined) this.#users.set(key, (id = this.nextId()));
    return id;
  }

  addToken(token: string, grant: { login: string; owners?: string[]; access?: Access }): void {
    this.#tokens.set(token, { login: this.#known(grant.login), owners: grant.owners ?? [], access: grant.access ?? "write" });
  }

  grant(token: string): Grant | undefined {
    return this.#tokens.get(token);
  }

  repo(owner: string, name: string): Repo | undefined {
    return this.#repos.get(`${owner}/${name}`.toLowerCase());
  }

  visible(repo: Repo, grant: Grant): boolean {
    return grant.owners.length === 0 || grant.owners.some((o) => o.toLowerCase() === repo.owner.toLowerCase());
  }

  repos(): Repo[] {
    return [...this.#repos.values()];
  }

  /** The repositories with a checkout, to check before serving. */
  gitRepos(): GitRepo[] {
    return [...this.#repos.values()].flatMap((r) => (r.git ? [r.git] : []));
  }

  labelNamed(repo: Repo, name: string): Label | undefined {
    return repo.labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
  }

  addLabel(repo: Repo, name: string, color = "ededed", description = ""): Label {
    const label = { id: this.nextId(), name, color, description };
    repo.labels.push(label);
    return label;
  }
}
