import { Hono, type Context } from "hono";
import { CODES } from "../api/errors.js";
import { Name } from "../api/threads.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import { Policy, type WorkspaceConfig } from "../api/workspaces.js";
import type { AppEnv } from "../app-env.js";
import { workspaceOf } from "../env.js";
import { refusal } from "../http.js";
import { jsonBody } from "../validate.js";
import { policyOf } from "../workspace-rules.js";

/** SPEC "Workspaces and memory": the parts that exist so far. */
export const workspaces = new Hono<AppEnv>();


/** A configured workspace, or the refusal for a name the host does not configure. */
function configured(c: Context<AppEnv>, name: string): WorkspaceConfig | Response {
  const ws = c.var.config.workspaces?.get(name);
  if (ws) return ws;
  return refusal(404, `no workspace ${name}`, CODES.workspaceNotFound, { workspaces: [...(c.var.config.workspaces?.keys() ?? [])] });
}

workspaces.get("/workspaces", (c) => {
  const all = [...(c.var.config.workspaces?.values() ?? [])];
  return c.json({ workspaces: all.map(({ name, slug, accounts, allowedModels }) => ({ name, slug, accounts, allowedModels })) });
});

workspaces.get("/workspaces/:name", async (c) => {
  const ws = configured(c, c.req.param("name"));
  if (ws instanceof Response) return ws;
  const head = await workspaceOf(c.env, ws.name).head();
  return c.json({ ...ws, policy: await policyOf(c.env, ws), head });
});

workspaces.put("/workspaces/:name/policy", jsonBody(Policy), async (c) => {
  const ws = configured(c, c.req.param("name"));
  if (ws instanceof Response) return ws;
  const policy = c.req.valid("json");
  // Defaults that the roster would refuse would make every spawn relying on them fail.
  const { model, account } = policy.defaults;
  if (model && ws.allowedModels.length > 0 && !ws.allowedModels.includes(model))
    return refusal(400, `default model ${model} is not allowed in workspace ${ws.name}`, CODES.modelNotAllowed, { allowedModels: ws.allowedModels });
  if (account && !ws.accounts.includes(account))
    return refusal(400, `default account ${account} is not in workspace ${ws.name}'s roster`, CODES.accountNotInRoster, { accounts: ws.accounts });
  if (account && c.var.config.accounts.size > 0 && !c.var.config.accounts.has(account))
    return refusal(400, `no account ${account} on this host`, CODES.unknownAccount, { accounts: [...c.var.config.accounts.keys()] });
  await workspaceOf(c.env, ws.name).setPolicy(JSON.stringify(policy));
  return c.json({ workspace: ws.name, policy });
});

workspaces.get("/workspaces/:name/head", async (c) => {
  const name = c.req.param("name");
  if (c.var.config.workspaces) {
    const ws = configured(c, name);
    if (ws instanceof Response) return ws;
  } else if (!Name.safeParse(name).success) return refusal(400, "workspace names are letters, digits, '.', '_' or '-', at most 64");
  return c.json({ workspace: name, head: await workspaceOf(c.env, name).head() });
});

/** A name whose index may be read: configured, or `default` (threads without a workspace), or any label on an unconfigured host. */
function indexName(c: Context<AppEnv>, name: string): Response | null {
  if (name === DEFAULT_WORKSPACE) return null;
  if (c.var.config.workspaces) {
    const ws = configured(c, name);
    return ws instanceof Response ? ws : null;
  }
  return Name.safeParse(name).success ? null : refusal(400, "workspace names are letters, digits, '.', '_' or '-', at most 64");
}

workspaces.get("/workspaces/:name/approvals", async (c) => {
  const name = c.req.param("name");
  const refused = indexName(c, name);
  if (refused) return refused;
  const items = await workspaceOf(c.env, name).approvals();
  return c.body(`{"workspace":${JSON.stringify(name)},"approvals":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});

workspaces.get("/workspaces/:name/questions", async (c) => {
  const name = c.req.param("name");
  const refused = indexName(c, name);
  if (refused) return refused;
  const items = await workspaceOf(c.env, name).questions();
  return c.body(`{"workspace":${JSON.stringify(name)},"questions":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});
