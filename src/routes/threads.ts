import { Hono } from "hono";
import { TAIL_MAX_WAIT_MS } from "../api/tail.js";
import { CODES } from "../api/errors.js";
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from "../api/threads.js";
import { answer, answerText, fail, refused, valueOf } from "../http/answer.js";
import { emptyMessageRefusal } from "../rules/message-empty.js";
import type { AppEnv } from "../http/app-env.js";
import { createThread } from "../flows/create-thread.js";
import { worktreeAfter } from "../flows/pr-work.js";
import { refuseWhileDraining } from "../http/drain-gate.js";
import { spendListBudget } from "../http/list-budget.js";
import { catalogOf } from "../platform/stubs.js";
import { idempotencyKey, intParam, pageParams, resumeCursor, seqParam } from "../http/query.js";
import { thread } from "./thread-stub.js";
import { serve } from "../http/serve.js";

export const threads = new Hono<AppEnv>();

serve(threads, "POST /spawn", async (c) => {
  const created = await createThread(c.env, c.var.config, c.req.valid("json"));
  return c.json(created, 201);
});

serve(threads, "GET /threads", async (c) => {
  const q = c.req.valid("query");
  const limit = intParam(q.limit, "limit", LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  if (!q.after) spendListBudget(c.req.raw.headers, c.var.config.threadListBudget);
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

serve(threads, "GET /threads/:id", async (c) => answer(c, await thread(c, c.req.param("id")).get()));

serve(threads, "GET /threads/:id/head", async (c) => answer(c, await thread(c, c.req.param("id")).head()));

serve(threads, "DELETE /threads/:id", async (c) => {
  const reason = c.req.query("reason") || null;
  if (reason && reason.length > 1000) refused(400, "reason is longer than 1000 characters", CODES.invalidQuery);
  const stub = thread(c, c.req.param("id"));
  const archived = valueOf(await stub.archive(reason));
  await worktreeAfter(c.env, valueOf(await stub.get()), "retired");
  return c.json({ archived: true, ...archived });
}, ["query"]);

serve(threads, "POST /threads/:id/restore", async (c) => {
  const stub = thread(c, c.req.param("id"));
  const restored = valueOf(await stub.restore());
  await worktreeAfter(c.env, valueOf(await stub.get()), "restored");
  return c.json({ archived: false, ...restored });
});

serve(threads, "PUT /threads/:id/seat-lease", async (c) =>
  answer(c, await thread(c, c.req.param("id")).setSeatLease(c.req.valid("json").seatLease)),
);

serve(threads, "POST /threads/:id/messages", async (c) => {
  const empty = emptyMessageRefusal(c.req.valid("json"));
  if (empty) fail(empty);
  const outcome = await thread(c, c.req.param("id")).postMessage(c.req.valid("json"), idempotencyKey(c));
  return answer(c, outcome, 202);
});

serve(threads, "PATCH /threads/:id/messages/:seq", async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq", CODES.invalidParam);
  // A release is a new message for the next turn: refused while the host drains, as a post is.
  if (c.req.valid("json").hold === false) await refuseWhileDraining(c.env, (p) => c.executionCtx.waitUntil(p));
  return answer(c, await thread(c, c.req.param("id")).editHeld(seq, c.req.valid("json")));
});

serve(threads, "DELETE /threads/:id/messages/:seq", async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq", CODES.invalidParam);
  return answer(c, await thread(c, c.req.param("id")).deleteHeld(seq));
});

serve(threads, "GET /threads/:id/tail", async (c) => {
  const page = pageParams(c.req.query());
  const waitMs = intParam(c.req.query("wait"), "wait", 0, TAIL_MAX_WAIT_MS, 0);
  return answerText(await thread(c, c.req.param("id")).page({ ...page, waitMs }));
}, ["query"]);

serve(threads, "GET /threads/:id/follow", async (c) => {
  const after = resumeCursor(c);
  return thread(c, c.req.param("id")).fetch(`https://thread/follow?after=${after}`);
}, ["query"]);

serve(threads, "GET /threads/:id/stream", (c) => thread(c, c.req.param("id")).fetch("https://thread/stream"));

serve(threads, "GET /threads/:id/tool-results/:seq", async (c) => {
  const seq = seqParam(c.req.param("seq"), "seq", CODES.invalidParam);
  return answerText(await thread(c, c.req.param("id")).toolResult(seq));
});

serve(threads, "GET /threads/:id/attachments", async (c) => answer(c, await thread(c, c.req.param("id")).attachments()));

/** An attachment whole, as it was sent, with its media type; `Content-Disposition` keeps its name. */
serve(threads, "GET /threads/:id/attachments/:sha256", async (c) => {
  const sha256 = c.req.param("sha256");
  if (!/^[0-9a-f]{64}$/.test(sha256)) refused(404, `thread has no attachment ${sha256.slice(0, 80)}`, CODES.attachmentNotFound);
  const found = valueOf(await thread(c, c.req.param("id")).attachment(sha256));
  return new Response(found.bytes, {
    headers: {
      "content-type": found.mediaType,
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(found.name)}`,
      "x-content-type-options": "nosniff",
    },
  });
});
