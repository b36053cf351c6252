import { Hono } from "hono";
import { accountPool, accountPoolState } from "../platform/account-pool.js";
import { CODES } from "../api/errors.js";
import { Name } from "../api/threads.js";
import type { AppEnv } from "../http/app-env.js";
import type { Env } from "../platform/env.js";
import { ENGINE_HOST_SILENT, engineList } from "../platform/engine-list.js";
import { refused } from "../http/answer.js";
import { serve } from "../http/serve.js";

/** SPEC "Operating the host": `/accounts`, the access-token route, and the operator's resets (docs/api.md "Accounts"). */
export const accounts = new Hono<AppEnv>();

const ACCOUNT_ID_RULE = "no such account: account ids are letters, digits, '.', '_' or '-', starting with a letter or digit";

/**
 * An account route of the pool, as the pool answers it. Account ids are names
 * (src/api/accounts.ts): anything else, `..` above all, would make another path of the
 * account service once its URL is parsed.
 */
async function poolRoute(env: Env, id: string, rest: string, method: string): Promise<Response> {
  if (!Name.safeParse(id).success) refused(404, ACCOUNT_ID_RULE, CODES.accountNotFound);
  let res: Response;
  try {
    res = await accountPool(env, `/accounts/${encodeURIComponent(id)}${rest}`, { method });
  } catch {
    refused(503, "the account pool did not answer", CODES.accountPoolUnavailable);
  }
  return new Response(res.body, { status: res.status, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

serve(accounts, "GET /accounts", async (c) => {
  const [engines, pool] = await Promise.all([engineList(c.env), accountPoolState(c.env)]);
  if (!engines) refused(503, ENGINE_HOST_SILENT, CODES.engineHostUnavailable);
  if (!pool) refused(503, "the account pool did not answer", CODES.accountPoolUnavailable);
  return c.json({ ...pool, engines });
});

/**
 * Issues a short-lived access token of an OAuth account to a trusted host-side caller.
 * Refusals: 403 untrusted caller, 429 rate limited, 404 unknown account, 409 the account
 * has no token to give (an API key, or a login the provider refused), 503 the provider's
 * token endpoint cannot be reached now.
 */
serve(accounts, "POST /accounts/:id/access-token", async (c) => {
  const id = c.req.param("id");
  // Account ids are names (src/api/accounts.ts): anything else, `..` above all, would make
  // another path of the account service once its URL is parsed.
  if (!Name.safeParse(id).success) refused(404, ACCOUNT_ID_RULE, CODES.accountNotFound);
  let res: Response;
  try {
    res = await accountPool(c.env, `/accounts/${encodeURIComponent(id)}/access-token`, { method: "POST" });
  } catch {
    refused(503, "the account pool did not answer", CODES.credentialUnreachable, undefined, { "retry-after": "5" });
  }
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  const retryAfter = res.headers.get("retry-after");
  if (retryAfter) headers.set("retry-after", retryAfter);
  return new Response(res.body, { status: res.status, headers });
});

/**
 * The operator's reset of an account's spent engine_b allowance (docs/credentials.md,
 * "Refused models and engine_b credit"). Local callers only: the contract row is `localOnly`, so serve() refuses
 * any other before this runs.
 */
serve(accounts, "POST /accounts/:id/engine-b/credit-reset", (c) => poolRoute(c.env, c.req.param("id"), "/engine-b/credit-reset", "POST"));

/** The operator's clearing of a model refusal recorded against an account. Local callers only, as above. */
serve(accounts, "DELETE /accounts/:id/model-refusals/:model", (c) => {
  const model = c.req.param("model");
  // A model id is at most 200 characters (src/api/threads.ts), so a longer one holds no refusal worth asking the pool for.
  if (model.length > 200) refused(400, "a model id is at most 200 characters", CODES.invalidParam);
  return poolRoute(c.env, c.req.param("id"), `/model-refusals/${encodeURIComponent(model)}`, "DELETE");
});
