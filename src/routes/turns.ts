import { CODES } from "../api/errors.js";
import { Hono } from "hono";
import { z } from "zod";
import { CompactRequest } from "../api/compaction.js";
import type { SpawnSpec, ThreadSpec } from "../api/threads.js";
import { ApprovalDecisionBody, ForkBody, LoopContinue, LoopStart, QuestionAnswerBody, RecoverBody, RoleChange, SendMessage } from "../api/turns.js";
import type { AppEnv } from "../http/app-env.js";
import { createThread } from "../flows/create-thread.js";
import { sharedWorktree } from "../rules/spawn.js";
import { notWhileDraining } from "../http/drain-gate.js";
import { answer, fail, refused } from "../http/answer.js";
import { emptyMessageRefusal } from "../rules/message-empty.js";
import { jsonBody } from "../http/validate.js";
import { thread } from "./thread-stub.js";

/** SPEC "Start work" (send, fork, loops) and "Control a turn". */
export const turns = new Hono<AppEnv>();

const requestId = z.string().min(1).max(100);

turns.post("/threads/:id/send", notWhileDraining, jsonBody(SendMessage), async (c) => {
  const { async: dontWait, ...message } = c.req.valid("json");
  const empty = emptyMessageRefusal(message);
  if (empty) fail(empty);
  const stub = thread(c, c.req.param("id"));
  if (dontWait) return answer(c, await stub.postMessage(message), 202);
  const sent = await stub.send(message);
  return answer(c, sent, sent.ok && sent.value.outcome === "queued" ? 202 : 200);
});

turns.get("/threads/:id/turn", async (c) => answer(c, await thread(c, c.req.param("id")).turnStatus()));

turns.get("/threads/:id/steering", async (c) => answer(c, await thread(c, c.req.param("id")).steering()));

turns.post("/threads/:id/interrupt", async (c) => answer(c, await thread(c, c.req.param("id")).interrupt()));

turns.get("/threads/:id/compact", async (c) => answer(c, await thread(c, c.req.param("id")).compactionStatus()));

turns.post("/threads/:id/compact", jsonBody(CompactRequest), async (c) =>
  answer(c, await thread(c, c.req.param("id")).compact(c.req.valid("json").mode)),
);

turns.post("/threads/:id/approvals/:approvalId", jsonBody(ApprovalDecisionBody), async (c) => {
  const id = requestId.safeParse(c.req.param("approvalId"));
  if (!id.success) refused(400, "approvalId must be 1 to 100 characters", CODES.invalidParam);
  return answer(c, await thread(c, c.req.param("id")).resolveApproval(id.data, c.req.valid("json").decision));
});

turns.get("/threads/:id/questions/:requestId", async (c) => answer(c, await thread(c, c.req.param("id")).question(c.req.param("requestId"))));

turns.post("/threads/:id/questions/:requestId/answer", jsonBody(QuestionAnswerBody), async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "answer", c.req.valid("json").answer)),
);

turns.post("/threads/:id/questions/:requestId/dismiss", async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "dismiss")),
);

turns.post("/threads/:id/questions/:requestId/continue", async (c) =>
  answer(c, await thread(c, c.req.param("id")).resolveQuestion(c.req.param("requestId"), "continue")),
);

turns.post("/threads/:id/role", jsonBody(RoleChange), async (c) =>
  answer(c, await thread(c, c.req.param("id")).retireHead()),
);

turns.post("/threads/:id/recover", jsonBody(RecoverBody), async (c) =>
  answer(c, await thread(c, c.req.param("id")).recover(c.req.valid("json").reason)),
);

/** The parent's spec as a spawn request, so a fork's own fields override it and get the same checks. */
function specAsSpawn(spec: ThreadSpec): SpawnSpec {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (v !== null) out[k] = v;
  return out as SpawnSpec;
}

turns.post("/threads/:id/fork", notWhileDraining, jsonBody(ForkBody), async (c) => {
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

turns.get("/threads/:id/loop", async (c) => answer(c, await thread(c, c.req.param("id")).loopState()));

turns.post("/threads/:id/loop", notWhileDraining, jsonBody(LoopStart), async (c) => {
  const { prompt, maxTurns, until } = c.req.valid("json");
  return answer(c, await thread(c, c.req.param("id")).startLoop(prompt, maxTurns, until), 202);
});

turns.post("/threads/:id/loop/continue", notWhileDraining, jsonBody(LoopContinue), async (c) =>
  answer(c, await thread(c, c.req.param("id")).continueLoop(c.req.valid("json").turns), 202),
);

turns.post("/threads/:id/loop/stop", async (c) => answer(c, await thread(c, c.req.param("id")).stopLoop()));
