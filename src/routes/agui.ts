import { Hono } from "hono";
import type { AppEnv } from "../http/app-env.js";
import { answer } from "../http/answer.js";
import { intParam, resumeCursor, seqParam } from "../http/query.js";
import { serve } from "../http/serve.js";
import { TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT } from "../api/tail.js";
import { startAguiRun } from "../flows/agui-run.js";
import { thread } from "./thread-stub.js";

/** The thread as AG-UI for frontends (docs/agui.md). */
export const agui = new Hono<AppEnv>();

serve(agui, "GET /threads/:id/agui", async (c) => {
  const after = resumeCursor(c);
  return thread(c, c.req.param("id")).fetch(`https://thread/agui?after=${after}`);
}, ["query"]);

serve(agui, "GET /threads/:id/agui-page", async (c) => {
  const q = c.req.valid("query");
  const before = q.before === undefined ? undefined : seqParam(q.before, "before");
  const limit = intParam(q.limit, "limit", TAIL_DEFAULT_LIMIT, TAIL_MAX_LIMIT);
  return answer(c, await thread(c, c.req.param("id")).aguiPage(before, limit));
});

serve(agui, "POST /threads/:id/agui", async (c) => {
  const id = c.req.param("id");
  const stub = thread(c, id);
  const input = c.req.valid("json");
  const start = await startAguiRun(c.env, id, input);
  const params = new URLSearchParams({ after: String(start.after), run: input.runId, inputs: start.inputs.join(","), answered: JSON.stringify(start.answered) });
  return stub.fetch(`https://thread/agui-run?${params}`);
});
