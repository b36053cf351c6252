import { listBudgetRefusal } from "../http/list-budget.js";
import { Hono } from "hono";
import { z } from "zod";
import { TAIL_MAX_WAIT_MS } from "../api/tail.js";
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, ListThreadsQuery, PatchMessage, PostMessage, SpawnSpec } from "../api/threads.js";
import { answer, answerText, refusal } from "../http/answer.js";
import { jsonBody, valid } from "../http/validate.js";
import type { AppEnv } from "../http/app-env.js";
import { createThread } from "../flows/create-thread.js";
import { drainRefusal, notWhileDraining } from "../http/drain-gate.js";
import { catalogOf } from "../platform/stubs.js";
import { intParam, pageParams, resumeCursor, seqParam } from "../http/query.js";
import { thread } from "./thread-stub.js";

export const threads = new Hono<AppEnv>();

threads.post("/spawn", notWhileDraining, jsonBody(SpawnSpec), async (c) => {
  const created = await createThread(c.env, c.var.config, c.req.valid("json"));
  return created instanceof Response ? created : c.json(created, 201);
});

threads.get("/threads", valid("query", ListThreadsQuery), async (c) => {
  const q = c.req.valid("query");
  const limit = intParam(q.limit, "limit", LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  if (limit instanceof Response) return limit;
  if (!q.after) {
    const spent = listBudgetRefusal(c.req.raw.headers, c.var.config.threadListBudget);
    if (spent) return spent;
  }
  const outcome = await catalogOf(c.env).list({
    limit,
    after: q.after || null,
    sort: q.sort ?? "created",
    archived: q.archived ?? "live",
    role: q.role,
    type: q.type,
    workspace: q.workspace,
    parent: q.parent,
    attached: q.attached === undefined ? undefined : q.attached === "true",
    seats: q.seats ?? "open",
  });
  return answer(c, outcome);
});


threads.get("/threads/:id", async (c) => answer(c, await thread(c, c.req.param("id")).get()));

threads.get("/threads/:id/head", async (c) => answer(c, await thread(c, c.req.param("id")).head()));

threads.delete("/threads/:id", async (c) => {
  const reason = c.req.query("reason") || null;
  if (reason && reason.length > 1000) return refusal(400, "reason is longer than 1000 characters");
  const outcome = await thread(c, c.req.param("id")).archive(reason);
  return outcome.ok ? c.json({ archived: true, ...outcome.value }) : answer(c, outcome);
});

threads.post("/threads/:id/restore", async (c) => {
  const outcome = await thread(c, c.req.param("id")).restore();
  return outcome.ok ? c.json({ archived: false, ...outcome.value }) : answer(c, outcome);
});

threads.put("/threads/:id/seat-lease", jsonBody(z.object({ seatLease: z.string().min(1).max(200).nullable() }).strict()), async (c) =>
  answer(c, await thread(c, c.req.param("id")).setSeatLease(c.req.valid("json").seatLease)),
);

threads.post("/threads/:id/messages", notWhileDraining, jsonBody(PostMessage), async (c) => {
  const key = c.req.header("idempotency-key");
  if (key !== undefined && (key.length === 0 || key.length > 200)) return refusal(400, "Idempotency-Key must be 1 to 200 characters");
  const outcome = await thread(c, c.req.param("id")).postMessage(c.req.valid("json"), key);
  return answer(c, outcome, 202);
});

threads.patch("/threads/:id/messages/:seq", jsonBody(PatchMessage), async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq");
  if (seq instanceof Response) return seq;
  // A release is a new message for the next turn: refused while the host drains, as a post is.
  const refused = c.req.valid("json").hold === false ? await drainRefusal(c.env, (p) => c.executionCtx.waitUntil(p)) : null;
  if (refused) return refused;
  return answer(c, await thread(c, c.req.param("id")).editHeld(seq, c.req.valid("json")));
});

threads.delete("/threads/:id/messages/:seq", async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq");
  if (seq instanceof Response) return seq;
  return answer(c, await thread(c, c.req.param("id")).deleteHeld(seq));
});

threads.get("/threads/:id/tail", async (c) => {
  const page = pageParams(c.req.query());
  if (page instanceof Response) return page;
  const waitMs = intParam(c.req.query("wait"), "wait", 0, TAIL_MAX_WAIT_MS, 0);
  if (waitMs instanceof Response) return waitMs;
  return answerText(await thread(c, c.req.param("id")).page({ ...page, waitMs }));
});

threads.get("/threads/:id/follow", async (c) => {
  const after = resumeCursor(c);
  if (after instanceof Response) return after;
  return thread(c, c.req.param("id")).fetch(`https://thread/follow?after=${after}`);
});

threads.get("/threads/:id/stream", (c) => thread(c, c.req.param("id")).fetch("https://thread/stream"));

threads.get("/threads/:id/tool-results/:seq", async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq");
  if (seq instanceof Response) return seq;
  return answerText(await thread(c, c.req.param("id")).toolResult(seq));
});
