import { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { workspaceOf } from "../env.js";
import { refusal } from "../http.js";

/** SPEC "Workspaces and memory": the parts that exist so far. */
export const workspaces = new Hono<AppEnv>();

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

workspaces.get("/workspaces/:name/approvals", async (c) => {
  const name = c.req.param("name");
  if (!NAME.test(name)) return refusal(400, "workspace names are letters, digits, '.', '_' or '-', at most 64");
  const items = await workspaceOf(c.env, name).approvals();
  return c.body(`{"workspace":${JSON.stringify(name)},"approvals":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});

workspaces.get("/workspaces/:name/questions", async (c) => {
  const name = c.req.param("name");
  if (!NAME.test(name)) return refusal(400, "workspace names are letters, digits, '.', '_' or '-', at most 64");
  const items = await workspaceOf(c.env, name).questions();
  return c.body(`{"workspace":${JSON.stringify(name)},"questions":${items}}`, 200, { "content-type": "application/json; charset=utf-8" });
});
