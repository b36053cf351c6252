import { CODES } from "../api/errors.js";
import { Hono, type Context } from "hono";
import { operationShapeRefusal } from "../api/operations.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, answerText, refused } from "../http/answer.js";
import { idempotencyKey } from "../http/query.js";
import { startOperation } from "../flows/delegate.js";
import { subscribe, unsubscribe } from "../flows/subscribe.js";
import { mergeChild } from "../flows/merge.js";
import { thread } from "./thread-stub.js";
import { serve } from "../http/serve.js";

/** SPEC "Resources" (Operation, Subscription): delegations, subscription edges, long actions (docs/operations.md), and subscriptions (docs/subscriptions.md). */
export const operations = new Hono<AppEnv>();

const operationId = (c: Context<AppEnv>) => {
  const id = c.req.param("operation") ?? "";
  if (id.length === 0 || id.length > 100) refused(404, "no such operation", CODES.operationNotFound);
  return id;
};

serve(operations, "GET /threads/:id/operations", async (c) => answerText(await thread(c, c.req.param("id")).operations()));

// Starting one may spawn a child: refused while the host drains, as a spawn is.
serve(operations, "POST /threads/:id/operations", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  const body = c.req.valid("json");
  const misfit = operationShapeRefusal(body);
  if (misfit) refused(400, misfit, CODES.invalidBody);
  const started = await startOperation(c.env, c.var.config, id, body, idempotencyKey(c));
  return answer(c, started, started.ok && started.value.replayed ? 200 : 201);
});

serve(operations, "GET /threads/:id/operations/:operation", async (c) => answerText(await thread(c, c.req.param("id")).operation(operationId(c))));

serve(operations, "POST /threads/:id/operations/:operation", async (c) =>
  answer(c, await thread(c, c.req.param("id")).reportOperation(operationId(c), JSON.stringify(c.req.valid("json")), "caller", idempotencyKey(c))),
);

serve(operations, "GET /threads/:id/subscriptions", async (c) => answer(c, await thread(c, c.req.param("id")).subscriptionList()));

serve(operations, "POST /threads/:id/subscriptions", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await subscribe(c.env, c.var.config, id, c.req.valid("json")), 201);
});

serve(operations, "DELETE /threads/:id/subscriptions/:watch", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await unsubscribe(c.env, id, c.req.param("watch")));
});

serve(operations, "POST /threads/:id/events", async (c) => {
  const { data, ...event } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  return answer(c, await stub.cycleEvent({ cycle: event.kind, ...(event.step ? { step: event.step } : {}), ...(event.child ? { child: event.child } : {}), ...(event.status ? { status: event.status } : {}), ...(event.text ? { text: event.text } : {}) }, data === undefined ? undefined : JSON.stringify(data)), 201);
});

// A refusal is a normal result with reasons: 200 either way (SPEC "Client conventions").
serve(operations, "POST /threads/:id/gate", async (c) => answer(c, await thread(c, c.req.param("id")).gate(c.req.valid("json"))));

serve(operations, "POST /threads/:id/merge", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await mergeChild(c.env, id, c.req.valid("json").child));
});
