import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "../http/app-env.js";
import { hostOf, threadOf } from "../platform/stubs.js";
import { answer, refused } from "../http/answer.js";
import { runTool } from "../flows/runtime-tools.js";
import { serve } from "../http/serve.js";

/**
 * Routes for the front only, behind the token it shares with the worker
 * (`SERVICE_INTERNAL_TOKEN`, fresh each boot). Without a token they do not exist.
 */
export const internal = new Hono<AppEnv>();

internal.use("/internal/*", async (c, next) => {
  const token = c.var.config.internalToken;
  if (!token || c.req.header("x-service-internal") !== token) refused(403, "internal route: the front only", CODES.internalOnly);
  await next();
});

/**
 * The boot sweep: activates every thread that was mid-turn when the host went down.
 * Activation is what records the lost turn (see Thread's constructor).
 */
serve(internal, "POST /internal/boot-sweep", async (c) => {
  const ids = await hostOf(c.env).runningTurns();
  const results = await Promise.all(
    ids.map(async (id) => {
      try {
        const r = await threadOf(c.env, id).reconcile();
        return { id, running: r.running };
      } catch (err) {
        return { id, error: (err as Error).message };
      }
    }),
  );
  return c.json({ swept: results });
});

/** The front's measurement of the machine: the Host object decides the spawn pause from it. */
serve(internal, "POST /internal/host-report", async (c) => {
  const { report, thresholds } = c.req.valid("json");
  return c.json(await hostOf(c.env).hostReport(report, thresholds));
});

/** A running turn's call of one of the runtime's tools, from the engine host (docs/tools.md). */
serve(internal, "POST /internal/tools", async (c) => answer(c, await runTool(c.env, c.var.config, c.req.valid("json"), (p) => c.executionCtx.waitUntil(p))));
