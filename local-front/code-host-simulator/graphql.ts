/**
 * `POST /graphql`: the slice of GitHub's GraphQL API that review threads need, since GitHub
 * shows whether a thread is resolved only there. It answers as GitHub's does: 200 with
 * `data` and `errors` (a query that does not parse or validate, a repository or pull
 * request not found, a mutation the token may not make), the errors at the top level with
 * GitHub's `type` where GitHub gives one. Parse and validation messages are graphql-js's.
 */
import type { GraphQLSchema } from "graphql";
import { comparisonOf, tipsOfOne } from "./commits.js";
import { placeOf, type Comparison } from "./patch.js";
import { nodeId, type View } from "./shapes.js";
import type { Grant, Pull, Repo, ReviewComment } from "./store.js";

const SDL = `
  type Query {
    viewer: User!
    repository(owner: String!, name: String!): Repository
  }
  type Mutation {
    resolveReviewThread(input: ResolveReviewThreadInput!): ResolveReviewThreadPayload
    unresolveReviewThread(input: UnresolveReviewThreadInput!): UnresolveReviewThreadPayload
  }
  input ResolveReviewThreadInput { threadId: ID!, clientMutationId: String }
  input UnresolveReviewThreadInput { threadId: ID!, clientMutationId: String }
  type ResolveReviewThreadPayload { thread: PullRequestReviewThread, clientMutationId: String }
  type UnresolveReviewThreadPayload { thread: PullRequestReviewThread, clientMutationId: String }
  type User { login: String! }
  type Repository {
    id: ID!
    name: String!
    nameWithOwner: String!
    pullRequest(number: Int!): PullRequest
  }
  type PullRequest {
    id: ID!
    number: Int!
    reviewThreads(first: Int, after: String): PullRequestReviewThreadConnection!
  }
  enum DiffSide { LEFT RIGHT }
  type PullRequestReviewThread {
    id: ID!
    isResolved: Boolean!
    isOutdated: Boolean!
    path: String!
    line: Int
    originalLine: Int
    startLine: Int
    diffSide: DiffSide!
    comments(first: Int, after: String): PullRequestReviewCommentConnection!
  }
  type PullRequestReviewComment {
    id: ID!
    databaseId: Int
    body: String!
    author: User
    path: String!
    line: Int
    originalLine: Int
    createdAt: String!
    url: String!
  }
  type PageInfo { hasNextPage: Boolean!, hasPreviousPage: Boolean!, startCursor: String, endCursor: String }
  type PullRequestReviewThreadConnection { nodes: [PullRequestReviewThread], edges: [PullRequestReviewThreadEdge], pageInfo: PageInfo!, totalCount: Int! }
  type PullRequestReviewThreadEdge { cursor: String!, node: PullRequestReviewThread }
  type PullRequestReviewCommentConnection { nodes: [PullRequestReviewComment], edges: [PullRequestReviewCommentEdge], pageInfo: PageInfo!, totalCount: Int! }
  type PullRequestReviewCommentEdge { cursor: String!, node: PullRequestReviewComment }
`;

type Graphql = typeof import("graphql");

/**
 * graphql-js and the schema, made with the first GraphQL request: most fronts never answer
 * one, and loading it cost every start about 150 ms of CPU and 12 MB.
 */
let loading: Promise<{ gql: Graphql; schema: GraphQLSchema }> | null = null;
/** Set once loaded, before any resolver that throws it runs. */
let GraphQLError: Graphql["GraphQLError"];

function graphqlJs(): Promise<{ gql: Graphql; schema: GraphQLSchema }> {
  if (!loading) {
    loading = import("graphql").then((gql) => {
      GraphQLError = gql.GraphQLError;
      return { gql, schema: gql.buildSchema(SDL) };
    });
    loading.catch(() => (loading = null));
  }
  return loading;
}

const MAX_PAGE = 100;

/** GitHub's error with its `type` (NOT_FOUND, FORBIDDEN), rendered at the error's top level. */
const typed = (type: string, message: string) => new GraphQLError(message, { extensions: { type } });

const cursorOf = (n: number) => Buffer.from(`cursor:v2:${n}`).toString("base64");

function indexOf(cursor: string): number {
  const m = /^cursor:v2:(\d{1,9})$/.exec(Buffer.from(cursor, "base64").toString());
  if (!m) throw new GraphQLError(`\`${cursor}\` does not appear to be a valid cursor.`);
  return Number(m[1]);
}

/** A connection, paged forward as GitHub pages it: `first` is required and at most 100. */
function connection<T>(all: T[], args: { first?: number | null; after?: string | null }, field: string, node: (t: T) => unknown) {
  const first = args.first;
  if (first === undefined || first === null) throw new GraphQLError(`You must provide a \`first\` or \`last\` value to properly paginate the \`${field}\` connection.`);
  if (first < 0) throw new GraphQLError(`\`first\` on the \`${field}\` connection cannot be less than zero.`);
  if (first > MAX_PAGE) throw new GraphQLError(`Requesting ${first} records on the \`${field}\` connection exceeds the \`first\` limit of ${MAX_PAGE} records.`);
  const start = args.after ? indexOf(args.after) + 1 : 0;
  const items = all.slice(start, start + first);
  return {
    nodes: items.map(node),
    edges: items.map((t, i) => ({ cursor: cursorOf(start + i), node: node(t) })),
    pageInfo: { hasNextPage: start + items.length < all.length, hasPreviousPage: start > 0, startCursor: items.length ? cursorOf(start) : null, endCursor: items.length ? cursorOf(start + items.length - 1) : null },
    totalCount: all.length,
  };
}

interface Context {
  view: View;
  grant: Grant;
  /** Each pull request's diff, asked once a request: every thread's `isOutdated` needs it. */
  diffs: Map<Pull, Promise<Comparison | null>>;
}

function diffOf(ctx: Context, repo: Repo, pull: Pull): Promise<Comparison | null> {
  let diff = ctx.diffs.get(pull);
  if (!diff) {
    // A pull request whose branches are gone has no diff: its threads are all outdated.
    diff = tipsOfOne(repo, pull).then((tips) => comparisonOf(repo, pull, tips)).catch(() => null);
    ctx.diffs.set(pull, diff);
  }
  return diff;
}

const repoPath = (repo: Repo) => `${repo.owner}/${repo.name}`;

/** A review thread: its first comment and the replies to it. */
function thread(ctx: Context, repo: Repo, pull: Pull, root: ReviewComment) {
  const comments = pull.reviewComments.filter((c) => c.id === root.id || c.inReplyTo === root.id);
  const outdated = async () => placeOf(await diffOf(ctx, repo, pull), root) === null;
  return {
    id: nodeId("PRRT", root.id),
    isResolved: pull.resolved.has(root.id),
    isOutdated: outdated,
    path: root.path,
    line: async () => ((await outdated()) ? null : root.line),
    originalLine: root.line,
    startLine: root.startLine,
    diffSide: root.side,
    comments: (args: { first?: number; after?: string }) =>
      connection(comments, args, "comments", (c) => ({
        id: nodeId("PRRC", c.id),
        databaseId: c.id,
        body: c.body,
        author: { login: c.user },
        path: c.path,
        line: async () => ((await outdated()) ? null : c.line),
        originalLine: c.line,
        createdAt: c.createdAt,
        url: `${ctx.view.api}/${repoPath(repo)}/pull/${pull.number}#discussion_r${c.id}`,
      })),
  };
}

function repository(ctx: Context, repo: Repo) {
  return {
    id: nodeId("R", repo.id),
    name: repo.name,
    nameWithOwner: repoPath(repo),
    pullRequest: ({ number }: { number: number }) => {
      const pull = repo.pulls.get(number);
      if (!pull) throw typed("NOT_FOUND", `Could not resolve to a PullRequest with the number of ${number}.`);
      return {
        id: nodeId("PR", pull.id),
        number: pull.number,
        reviewThreads: (args: { first?: number; after?: string }) =>
          connection(
            pull.reviewComments.filter((c) => c.inReplyTo === null),
            args,
            "reviewThreads",
            (root) => thread(ctx, repo, pull, root),
          ),
      };
    },
  };
}

/** The thread a global id names, among the repositories the token sees. */
function threadById(ctx: Context, id: string): { repo: Repo; pull: Pull; root: ReviewComment } {
  for (const repo of ctx.view.store.repos()) {
    if (!ctx.view.store.visible(repo, ctx.grant)) continue;
    for (const pull of repo.pulls.values()) {
      const root = pull.reviewComments.find((c) => c.inReplyTo === null && nodeId("PRRT", c.id) === id);
      if (root) return { repo, pull, root };
    }
  }
  throw typed("NOT_FOUND", `Could not resolve to a node with the global id of '${id}'.`);
}

function setResolved(ctx: Context, input: { threadId: string; clientMutationId?: string | null }, resolved: boolean) {
  const { repo, pull, root } = threadById(ctx, input.threadId);
  if (ctx.grant.access !== "write") throw typed("FORBIDDEN", "Resource not accessible by personal access token");
  if (resolved) pull.resolved.add(root.id);
  else pull.resolved.delete(root.id);
  return { thread: thread(ctx, repo, pull, root), clientMutationId: input.clientMutationId ?? null };
}

function root(ctx: Context) {
  return {
    viewer: { login: ctx.grant.login },
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const repo = ctx.view.store.repo(owner, name);
      if (!repo || !ctx.view.store.visible(repo, ctx.grant)) throw typed("NOT_FOUND", `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      return repository(ctx, repo);
    },
    resolveReviewThread: ({ input }: { input: { threadId: string; clientMutationId?: string } }) => setResolved(ctx, input, true),
    unresolveReviewThread: ({ input }: { input: { threadId: string; clientMutationId?: string } }) => setResolved(ctx, input, false),
  };
}

/** One GraphQL request's answer (always 200, as GitHub answers a query it could read as JSON). */
export async function answerGraphql(view: View, grant: Grant, body: unknown): Promise<{ status: number; json: unknown }> {
  const { query, variables, operationName } = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof query !== "string") return { status: 200, json: { errors: [{ message: "A query attribute must be specified and must be a string." }] } };
  if (variables !== undefined && variables !== null && (typeof variables !== "object" || Array.isArray(variables)))
    return { status: 200, json: { errors: [{ message: "Variables are invalid JSON." }] } };
  const ctx: Context = { view, grant, diffs: new Map() };
  const { gql, schema } = await graphqlJs();
  const result = await gql.graphql({
    schema,
    source: query,
    rootValue: root(ctx),
    variableValues: (variables ?? null) as Record<string, unknown> | null,
    operationName: typeof operationName === "string" ? operationName : null,
  });
  const errors = result.errors?.map((e) => ({
    ...(typeof e.extensions?.type === "string" ? { type: e.extensions.type } : {}),
    ...(e.path ? { path: e.path } : {}),
    ...(e.locations ? { locations: e.locations } : {}),
    message: e.message,
  }));
  return { status: 200, json: { ...("data" in result ? { data: result.data } : {}), ...(errors ? { errors } : {}) } };
}
