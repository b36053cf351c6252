import { CODES } from "../api/errors.js";
import { Hono } from "hono";
import * as z from "zod";
import type { SpawnSpec, ThreadSpec } from "../api/threads.js";
import type { AppEnv } from "../http/app-env.js";
import { createThread } from "../flows/create-thread.js";
import { sharedWorktree } from "../rules/spawn.js";
import { answer, fail, refused } from "../http/answer.js";
import { emptyMessageRefusal } from "../rules/message-empty.js";
import { thread } from "./thread-stub.js";
import { serve } from "../http/serve.js";

/** SPEC "Start work" (send, fork, loops) and "Control a turn". */
export const turns = new Hono<AppEnv>();

const requestId = z.string().min(1).max(100);

serve(turns, "POST /threads/:id/send", async (c) => {
  const { async: dontWait, ...message } = c.req.valid("json");
  const empty = emptyMessageRefusal(message);
  if (empty) fail(empty);
  const stub = thread(c, c.req.param("id"));
  if (dontWait) return answer(c, await stub.postMessage(message), 202);
  const sent = await stub.send(message);
  return answer(c, sent, sent.ok && sent.value.outcome === "queued" ? 202 : 200);
});

serve(turns, "GET /threads/:id/turn", async (c) => answer(c, await thread(c, c.req.param("id")).turnStatus()));

serve(turns, "GET /threads/:id/steering", async (c) => answer(c, await thread(c, c.req.param("id")).steering()));

serve(turns, "POST /threads/:id/interrupt", async (c) => answer(c, await thread(c, c.req.param("id")).interrupt()));

serve(turns, "GET /threads/:id/compact", async (c) => answer(c, await thread(c, c.req.param("id")).compactionStatus()));

serve(turns, "POST /threads/:id/compact", async (c) =>
  answer(c, await thread(c, c.req.param("id")).compact(c.req.valid("json").mode)),
);

serve(turns, "POST /threads/:id/approvals/:approvalId", async (c) => {
  const id = requestId.safeParse(c.req.param("approvalId"));
  if (!id.success) refused(400, "approvalId must be 1 to 100 characters", CODES.invalidParam);
  return answer(c, await thread(c, c.req.param("id")).resolveApproval(id.data, c.req.valid("json").decision));
});

serve(turns, "GET /threads/:id/questions/:requestId", async (c) => answer(c, await thread(c, c.req.param("id")).question(c.req.param("requestId"))));

serve(turns, "POST /threads/:id/questions/:requestId/answer", async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "answer", c.req.valid("json").answer)),
);

serve(turns, "POST /threads/:id/questions/:requestId/dismiss", async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "dismiss")),
);

serve(turns, "POST /threads/:id/questions/:requestId/continue", async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "continue")),
);

serve(turns, "POST /threads/:id/role", async (c) =>
  answer(c, await thread(c, c.req.param("id")).retireHead()),
);

serve(turns, "POST /threads/:id/recover", async (c) =>
  answer(c, await thread(c, c.req.param("id")).recover(c.req.valid("json").reason)),
);

/** The parent's spec as a spawn request, so a fork's own fields override it and get the same checks. */
function specAsSpawn(spec: ThreadSpec): SpawnSpec {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (v !== null) out[k] = v;
  return out as SpawnSpec;
}

serve(turns, "POST /threads/:id/fork", async (c) => {
  const { atSeq, ...overrides } = c.req.valid("json");
  const parentId = c.req.param("id");
  const source = await thread(c, parentId).forkSource(atSeq);
  if (!source.ok) return answer(c, source);
  const inherited = specAsSpawn(source.value.spec);
  // A new model without an engine picks its engine afresh, as a spawn would.
  if (overrides.model && !overrides.engine) delete inherited.engine;
  // A workspace has one head: the child of a head is a chat unless it asks to be the head.
  if (inherited.role === "head") inherited.role = "chat";
  const created = await createThread(
    c.env,
    c.var.config,
    { ...inherited, ...overrides },
    { parent: parentId, atSeq, transcript: source.value.transcript },
    undefined,
    sharedWorktree(source.value.spec, overrides.cwd),
  );
  return c.json({ ...created, parent: parentId, atSeq }, 201);
});

serve(turns, "GET /threads/:id/loop", async (c) => answer(c, await thread(c, c.req.param("id")).loopState()));

serve(turns, "POST /threads/:id/loop", async (c) => {
  const { prompt, maxTurns, until } = c.req.valid("json");
  return answer(c, await thread(c, c.req.param("id")).startLoop(prompt, maxTurns, until), 202);
});

serve(turns, "POST /threads/:id/loop/continue", async (c) =>
  answer(c, await thread(c, c.req.param("id")).continueLoop(c.req.valid("json").turns), 202),
);

serve(turns, "POST /threads/:id/loop/stop", async (c) => answer(c, await thread(c, c.req.param("id")).stopLoop()));

serve(turns, "POST /threads/:id/ui/generate", async (c) =>
  answer(c, await thread(c, c.req.param("id")).generateInterface(c.req.valid("json").source)),
);
