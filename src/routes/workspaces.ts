import { refuseUnknownModels } from "../flows/known-models.js";
import { engineForModel } from "../rules/spawn.js";
import { Hono, type Context } from "hono";
import { CODES } from "../api/errors.js";
import { Name } from "../api/threads.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import { MAX_WATCHED_THREADS } from "../api/workspace-feed.js";
import { type WorkspaceConfig } from "../api/workspaces.js";
import type { AppEnv } from "../http/app-env.js";
import { workspaceOf } from "../platform/stubs.js";
import { answerText, refused } from "../http/answer.js";
import { isThreadId } from "../shared/ids.js";
import { pageParams, resumeCursor } from "../http/query.js";
import { policyOf } from "../flows/workspace-policy.js";
import { serve } from "../http/serve.js";

/** SPEC "Workspaces and memory": the parts that exist so far. */
export const workspaces = new Hono<AppEnv>();

/** A configured workspace, or the refusal for a name the host does not configure. */
function configured(c: Context<AppEnv>, name: string): WorkspaceConfig {
  const ws = c.var.config.workspaces?.get(name);
  if (ws) return ws;
  refused(404, `no workspace ${name}`, CODES.workspaceNotFound, { workspaces: [...(c.var.config.workspaces?.keys() ?? [])] });
}

serve(workspaces, "GET /workspaces", (c) => {
  const all = [...(c.var.config.workspaces?.values() ?? [])];
  return c.json({ workspaces: all.map(({ name, slug, accounts, allowedModels }) => ({ name, slug, accounts, allowedModels })) });
});

serve(workspaces, "GET /workspaces/:name", async (c) => {
  const ws = configured(c, c.req.param("name"));
  const head = await workspaceOf(c.env, ws.name).head();
  return c.json({ ...ws, policy: await policyOf(c.env, ws), head });
});

serve(workspaces, "PUT /workspaces/:name/policy", async (c) => {
  const ws = configured(c, c.req.param("name"));
  const policy = c.req.valid("json");
  // Defaults that the roster would refuse would make every spawn relying on them fail.
  const { model, account } = policy.defaults;
  if (model && ws.allowedModels.length > 0 && !ws.allowedModels.includes(model))
    refused(400, `default model ${model} is not allowed in workspace ${ws.name}`, CODES.modelNotAllowed, { allowedModels: ws.allowedModels });
  if (account && !ws.accounts.includes(account))
    refused(400, `default account ${account} is not in workspace ${ws.name}'s roster`, CODES.accountNotInRoster, { accounts: ws.accounts });
  if (account && c.var.config.accounts.size > 0 && !c.var.config.accounts.has(account))
    refused(400, `no account ${account} on this host`, CODES.unknownAccount, { accounts: [...c.var.config.accounts.keys()] });
  if (model) await refuseUnknownModels(c.env, { engine: policy.defaults.engine ?? engineForModel(model), model }, "defaults.model");
  await workspaceOf(c.env, ws.name).setPolicy(JSON.stringify(policy));
  return c.json({ workspace: ws.name, policy });
});

serve(workspaces, "GET /workspaces/:name/head", async (c) => {
  const name = c.req.param("name");
  if (c.var.config.workspaces) configured(c, name);
  else if (!Name.safeParse(name).success) refused(400, "workspace names are letters, digits, '.', '_' or '-', at most 64", CODES.invalidParam);
  return c.json({ workspace: name, head: await workspaceOf(c.env, name).head() });
});

/** A name whose index may be read: configured, or `default` (threads without a workspace), or any label on an unconfigured host. */
export function indexName(c: Context<AppEnv>): string {
  const name = c.req.param("name")!;
  if (name === DEFAULT_WORKSPACE) return name;
  if (c.var.config.workspaces) return configured(c, name).name;
  if (!Name.safeParse(name).success) refused(400, "workspace names are letters, digits, '.', '_' or '-', at most 64", CODES.invalidParam);
  return name;
}

serve(workspaces, "GET /workspaces/:name/approvals", async (c) => {
  const name = indexName(c);
  const items = await workspaceOf(c.env, name).approvals();
  return c.body(`{"workspace":${JSON.stringify(name)},"approvals":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});

serve(workspaces, "GET /workspaces/:name/questions", async (c) => {
  const name = indexName(c);
  const items = await workspaceOf(c.env, name).questions();
  return c.body(`{"workspace":${JSON.stringify(name)},"questions":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});

// ---- the workspace's feed (docs/events.md "Workspace feed entries") ----

serve(workspaces, "GET /workspaces/:name/events", async (c) => {
  const name = indexName(c);
  const after = resumeCursor(c);
  return workspaceOf(c.env, name).fetch(`https://workspace/events?after=${after}`);
}, ["query"]);

/** `threads`: comma-separated thread ids, at most MAX_WATCHED_THREADS; absent, every thread. */
function watchedThreads(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const ids = raw.split(",");
  if (ids.length > MAX_WATCHED_THREADS) refused(400, `threads names ${ids.length} threads; at most ${MAX_WATCHED_THREADS}`, CODES.invalidQuery);
  const bad = ids.find((id) => !isThreadId(id));
  if (bad !== undefined) refused(400, `threads must be comma-separated thread ids, and ${JSON.stringify(bad)} is not one`, CODES.invalidQuery);
  return raw;
}

serve(workspaces, "GET /workspaces/:name/changes", async (c) => {
  const name = indexName(c);
  const threads = watchedThreads(c.req.query("threads"));
  const after = resumeCursor(c);
  const only = threads === null ? "" : `&threads=${threads}`;
  return workspaceOf(c.env, name).fetch(`https://workspace/changes?after=${after}${only}`);
}, ["query"]);

serve(workspaces, "GET /workspaces/:name/tail", async (c) => {
  const name = indexName(c);
  const page = pageParams(c.req.query());
  return answerText(await workspaceOf(c.env, name).page(page));
}, ["query"]);
