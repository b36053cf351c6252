import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "../http/app-env.js";
import { refused } from "../http/answer.js";
import { costPerMergedPr, mergeReceiptOf, startBuildThread } from "../flows/pr-work.js";
import { armRoom, capabilities, finalizeRound, findRoom, roomView, roundOf, startRound } from "../flows/review.js";
import { indexName } from "./workspaces.js";
import { serve } from "../http/serve.js";

/** SPEC capability 4, "Review rooms and pull requests" (docs/rooms.md). */
export const rooms = new Hono<AppEnv>();

/** A pull request's or a round's number in the path. */
function numberParam(raw: string | undefined, name: string): number {
  if (!raw || !/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2 ** 31 - 1) refused(400, `${name} must be a positive integer, not ${JSON.stringify(raw)}`, CODES.invalidParam);
  return Number(raw);
}

serve(rooms, "POST /workspaces/:name/rooms", async (c) => {
  const { room, created } = await armRoom(c.env, c.var.config, indexName(c), c.req.valid("json"));
  return c.json({ room }, created ? 201 : 200);
});

serve(rooms, "GET /workspaces/:name/rooms", async (c) => {
  const { repo, pr } = c.req.valid("query");
  return c.json(await findRoom(c.env, indexName(c), repo, pr));
});

serve(rooms, "GET /rooms/capabilities", async (c) => c.json(await capabilities(c.env)));

serve(rooms, "GET /rooms/:id", async (c) => c.json({ room: await roomView(c.env, c.req.param("id")) }));

serve(rooms, "POST /rooms/:id/rounds", async (c) =>
  c.json({ round: await startRound(c.env, c.req.param("id"), c.req.valid("json")) }, 202),
);

serve(rooms, "GET /rooms/:id/rounds/:n", async (c) => c.json({ round: await roundOf(c.env, c.req.param("id"), numberParam(c.req.param("n"), "n")) }));

serve(rooms, "POST /rooms/:id/finalize", async (c) => c.json({ review: await finalizeRound(c.env, c.req.param("id"), c.req.valid("json").n, (p) => c.executionCtx.waitUntil(p)) }));

serve(rooms, "POST /workspaces/:name/prs/:number/agents", async (c) => {
  const started = await startBuildThread(c.env, c.var.config, indexName(c), numberParam(c.req.param("number"), "number"), c.req.valid("json"));
  return c.json(started, 201);
});

serve(rooms, "GET /workspaces/:name/prs/:number/receipt", async (c) =>
  c.json(await mergeReceiptOf(c.env, indexName(c), numberParam(c.req.param("number"), "number"), c.req.valid("query").repo)),
);

serve(rooms, "GET /metrics/cost-per-merged-pr", async (c) => c.json(await costPerMergedPr(c.env)));
