import type { FilesQuery, OutlineQuery, ReadQuery, SearchBody } from "../src/api/code.js";
import type { CommentsQuery, OverlapBody, PageQuery, PullsQuery } from "../src/api/code-host.js";
import type { ArmRoom, BuildAgent, StartRound } from "../src/api/rooms.js";
import { WorkspaceCalls } from "./workspaces.js";

/** Code reads, the code host, and review rooms and pull requests. */
export class CodeCalls extends WorkspaceCalls {
  codeRoots() {
    return this.route("GET /code/roots", {});
  }

  /** A page of a root's tracked files; pass `nextCursor` as `cursor` for the next. */
  codeFiles(query: FilesQuery) {
    return this.route("GET /code/files", { query });
  }

  codeRead(query: ReadQuery) {
    return this.route("GET /code/read", { query });
  }

  codeOutline(query: OutlineQuery) {
    return this.route("GET /code/outline", { query });
  }

  codeSearch(body: SearchBody) {
    return this.route("POST /code/search", { body });
  }

  /** A page of pull requests, open ones unless `state` says; pass `nextCursor` as `cursor` for the next. */
  pulls(repo: string, query: PullsQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "" }, query });
  }

  /** A page of the files a pull request changes, with patches and hunk ranges. */
  pullDiff(repo: string, number: number, query: PageQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/diff", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** A page of a pull request's comments: the conversation, then the review comments, then the reviews. */
  pullComments(repo: string, number: number, query: CommentsQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/comments", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** A page of the check runs on a pull request's head commit. */
  pullChecks(repo: string, number: number, query: PageQuery = {}) {
    return this.route("GET /github/:owner/:repo/prs/:number/checks", { params: { owner: repo.split("/")[0] ?? "", repo: repo.split("/")[1] ?? "", number }, query });
  }

  /** One duplicate-work pass; it acts only when the runtime runs with SERVICE_PR_OVERLAP=on. */
  overlap(body: OverlapBody) {
    return this.route("POST /github/overlap", { body });
  }

  /** Arms a room for a pull request, or adopts the workspace's room for it (`created` false). */
  armRoom(workspace: string, body: ArmRoom) {
    return this.route("POST /workspaces/:name/rooms", { params: { name: workspace }, body });
  }

  /** A pull request's room and its newest round. */
  findRoom(workspace: string, repo: string, pr: number) {
    return this.route("GET /workspaces/:name/rooms", { params: { name: workspace }, query: { repo, pr } });
  }

  roomCapabilities() {
    return this.route("GET /rooms/capabilities", {});
  }

  room(id: string) {
    return this.route("GET /rooms/:id", { params: { id } });
  }

  /** Starts the next round; the reviewer returns its verdict with the submit_verdict tool. */
  startRound(id: string, body: StartRound = {}) {
    return this.route("POST /rooms/:id/rounds", { params: { id }, body });
  }

  round(id: string, n: number) {
    return this.route("GET /rooms/:id/rounds/:n", { params: { id, n } });
  }

  /** Posts a round's verdict (default: the newest) as one review on the code host. */
  finalize(id: string, n?: number) {
    return this.route("POST /rooms/:id/finalize", { params: { id }, body: n === undefined ? {} : { n } });
  }

  /** Starts a build thread in a worktree of the pull request's branch. */
  startBuildThread(workspace: string, pr: number, body: BuildAgent) {
    return this.route("POST /workspaces/:name/prs/:number/agents", { params: { name: workspace, number: pr }, body });
  }

  /** The read-only merge receipt. */
  mergeReceipt(workspace: string, pr: number, repo: string) {
    return this.route("GET /workspaces/:name/prs/:number/receipt", { params: { name: workspace, number: pr }, query: { repo } });
  }

  costPerMergedPr() {
    return this.route("GET /metrics/cost-per-merged-pr", {});
  }
}
