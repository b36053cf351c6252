import { Hono, type Context } from "hono";
import type { Outcome } from "../api/outcome.js";
import type { DrainStatus } from "../api/drain.js";
import type { AppEnv } from "../http/app-env.js";
import { settleDrain } from "../http/drain-gate.js";
import { hostOf } from "../platform/stubs.js";
import { answer } from "../http/answer.js";
import { serve } from "../http/serve.js";

/**
 * SPEC "Operating the host": read, arm and disarm the drain. These routes take any
 * program on loopback with no credential (SPEC "Authentication" 2), so an operator's
 * script needs nothing to drain the host; the caller gate still keeps pages of other
 * origins and rebound host names out, as for every route.
 */
export const drain = new Hono<AppEnv>();

/** The Host object's answer, remembered by this isolate so the routes that start work need not ask. */
async function settled(c: Context<AppEnv>, outcome: Outcome<DrainStatus>): Promise<Response> {
  if (outcome.ok) await settleDrain(c.env, outcome.value);
  return answer(c, outcome);
}

serve(drain, "GET /drain", async (c) => {
  const status = await hostOf(c.env).drainStatus();
  await settleDrain(c.env, status);
  return c.json(status);
});

serve(drain, "POST /drain", async (c) => {
  const { owner, reason } = c.req.valid("json");
  return settled(c, await hostOf(c.env).armDrain(owner ?? null, reason ?? null));
});

serve(drain, "DELETE /drain", async (c) => settled(c, await hostOf(c.env).disarmDrain()));

serve(drain, "DELETE /drain/claim", async (c) =>
  settled(c, await hostOf(c.env).releaseDrain(c.req.valid("query").owner)),
);
