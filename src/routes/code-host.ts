import { CODES } from "../api/errors.js";
import { Hono, type Context } from "hono";
import { PullParams, RepoParams, type ChecksPage, type CommentsPage, type DiffPage, type OverlapAnswer, type PullsPage } from "../api/code-host.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, refused } from "../http/answer.js";
import { callCode } from "../platform/code-call.js";
import { issuesSentence } from "../shared/issues.js";
import { serve } from "../http/serve.js";

/** SPEC capability 5: pull requests read from the code host (docs/code-host.md), by the code service, which holds the token. */
export const codeHost = new Hono<AppEnv>();

function params<T>(c: Context<AppEnv>, schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }): T {
  const parsed = schema.safeParse(c.req.param());
  if (!parsed.success) refused(400, `invalid path: ${issuesSentence(parsed.error, "path")}`, CODES.invalidParam);
  return parsed.data;
}

const pullPath = (p: PullParams, what: string) => `/github/${p.owner}/${p.repo}/prs/${p.number}/${what}`;

serve(codeHost, "GET /github/:owner/:repo/prs", async (c) => {
  const p = params(c, RepoParams);
  return answer(c, await callCode<PullsPage>(c.env, "GET", `/github/${p.owner}/${p.repo}/prs`, c.req.valid("query")));
});

serve(codeHost, "GET /github/:owner/:repo/prs/:number/diff", async (c) => answer(c, await callCode<DiffPage>(c.env, "GET", pullPath(params(c, PullParams), "diff"), c.req.valid("query"))));

serve(codeHost, "GET /github/:owner/:repo/prs/:number/comments", async (c) =>
  answer(c, await callCode<CommentsPage>(c.env, "GET", pullPath(params(c, PullParams), "comments"), c.req.valid("query"))),
);

serve(codeHost, "GET /github/:owner/:repo/prs/:number/checks", async (c) =>
  answer(c, await callCode<ChecksPage>(c.env, "GET", pullPath(params(c, PullParams), "checks"), c.req.valid("query"))),
);

// Acting is the operator's choice, read here; a caller can ask only for the pass.
serve(codeHost, "POST /github/overlap", async (c) =>
  answer(c, await callCode<OverlapAnswer>(c.env, "POST", "/github/overlap", { ...c.req.valid("json"), act: c.get("config").prOverlap })),
);
