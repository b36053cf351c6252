import { CODES } from "../../../src/api/errors.js";
import { CommentsQuery, OverlapRequest, PageQuery, PullParams, PullsQuery, RepoParams } from "../../../src/api/code-host.js";
import { PostReview } from "../../../src/api/rooms.js";
import { ok, type Outcome } from "../../../src/api/outcome.js";
import { invalid, segment } from "../http.js";
import type { HostClients } from "./clients.js";
import { mergeFacts } from "./merge-facts.js";
import { overlapPass } from "./overlap.js";
import { listPulls, pullChecks, pullComments, pullDiff, pullOf } from "./reads.js";
import { capabilities, postReview, reviewContext } from "./review.js";

const PULLS = /^\/github\/([^/]+)\/([^/]+)\/prs$/;
const PULL = /^\/github\/([^/]+)\/([^/]+)\/prs\/([^/]+)\/(diff|comments|checks)$/;
/** The review operations the worker asks for a room (not public routes): the pull request, its context, its merge facts, and one review. */
const REVIEWING = /^\/github\/([^/]+)\/([^/]+)\/prs\/([^/]+)(?:\/(context|merge-facts|review))?$/;

/**
 * The code service's `/github/...` routes (the worker checked the request already; they
 * are checked again, as every binding checks what it is handed). Null: not one of them.
 */
export async function codeHostRoute(clients: HostClients, method: string, url: URL, body: () => Promise<unknown>): Promise<Outcome<unknown> | null> {
  const query = Object.fromEntries(url.searchParams);
  if (method === "POST" && url.pathname === "/github/overlap") {
    const req = OverlapRequest.safeParse(await body());
    if (!req.success) return invalid(req.error, CODES.invalidBody);
    const client = clients.forOwner(req.data.repo.split("/")[0]!);
    return client.ok ? overlapPass(client.value, req.data) : client;
  }
  if (method === "GET" && url.pathname === "/github/capabilities") return ok(await capabilities(clients));
  const reviewing = REVIEWING.exec(url.pathname);
  if (reviewing && (method === "POST") === (reviewing[4] === "review") && (method === "GET" || method === "POST")) {
    const pull = PullParams.safeParse({ owner: segment(reviewing[1]!), repo: segment(reviewing[2]!), number: reviewing[3] });
    if (!pull.success) return invalid(pull.error, CODES.invalidParam);
    let review: PostReview | null = null;
    if (method === "POST") {
      const req = PostReview.safeParse(await body());
      if (!req.success) return invalid(req.error, CODES.invalidBody);
      review = req.data;
    }
    const client = clients.forOwner(pull.data.owner);
    if (!client.ok) return client;
    if (review) return postReview(client.value, pull.data, review);
    if (reviewing[4] === "context") return reviewContext(client.value, pull.data);
    if (reviewing[4] === "merge-facts") return mergeFacts(client.value, pull.data);
    return pullOf(client.value, pull.data);
  }
  if (method !== "GET") return null;
  const many = PULLS.exec(url.pathname);
  if (many) {
    const repo = RepoParams.safeParse({ owner: segment(many[1]!), repo: segment(many[2]!) });
    const q = PullsQuery.safeParse(query);
    if (!repo.success) return invalid(repo.error, CODES.invalidParam);
    if (!q.success) return invalid(q.error, CODES.invalidQuery);
    const client = clients.forOwner(repo.data.owner);
    return client.ok ? listPulls(client.value, repo.data, q.data) : client;
  }
  const one = PULL.exec(url.pathname);
  if (!one) return null;
  const pull = PullParams.safeParse({ owner: segment(one[1]!), repo: segment(one[2]!), number: one[3] });
  if (!pull.success) return invalid(pull.error, CODES.invalidParam);
  if (one[4] === "comments") {
    const q = CommentsQuery.safeParse(query);
    if (!q.success) return invalid(q.error, CODES.invalidQuery);
    const client = clients.forOwner(pull.data.owner);
    return client.ok ? pullComments(client.value, pull.data, q.data) : client;
  }
  const q = PageQuery.safeParse(query);
  if (!q.success) return invalid(q.error, CODES.invalidQuery);
  const client = clients.forOwner(pull.data.owner);
  if (!client.ok) return client;
  return one[4] === "diff" ? pullDiff(client.value, pull.data, q.data) : pullChecks(client.value, pull.data, q.data);
}
