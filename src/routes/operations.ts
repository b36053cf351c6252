import { CODES } from "../api/errors.js";
import { Hono, type Context } from "hono";
import { operationShapeRefusal, ReportOperation, StartOperation } from "../api/operations.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, answerText, refused } from "../http/answer.js";
import { notWhileDraining } from "../http/drain-gate.js";
import { jsonBody } from "../http/validate.js";
import { idempotencyKey } from "../http/query.js";
import { startOperation } from "../flows/delegate.js";
import { subscribe, unsubscribe } from "../flows/subscribe.js";
import { Subscribe } from "../api/subscriptions.js";
import { CycleEvent, GateRequest, MergeRequest } from "../api/cycles.js";
import { mergeChild } from "../flows/merge.js";
import { thread } from "./thread-stub.js";

/** SPEC "Resources" (Operation, Subscription): delegations, subscription edges, long actions (docs/operations.md), and subscriptions (docs/subscriptions.md). */
export const operations = new Hono<AppEnv>();

const operationId = (c: Context<AppEnv>) => {
  const id = c.req.param("operation") ?? "";
  if (id.length === 0 || id.length > 100) refused(404, "no such operation", CODES.operationNotFound);
  return id;
};

operations.get("/threads/:id/operations", async (c) => answerText(await thread(c, c.req.param("id")).operations()));

// Starting one may spawn a child: refused while the host drains, as a spawn is.
operations.post("/threads/:id/operations", notWhileDraining, jsonBody(StartOperation), async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  const body = c.req.valid("json");
  const misfit = operationShapeRefusal(body);
  if (misfit) refused(400, misfit, CODES.invalidBody);
  const started = await startOperation(c.env, c.var.config, id, body, idempotencyKey(c));
  return answer(c, started, started.ok && started.value.replayed ? 200 : 201);
});

operations.get("/threads/:id/operations/:operation", async (c) => answerText(await thread(c, c.req.param("id")).operation(operationId(c))));

operations.post("/threads/:id/operations/:operation", jsonBody(ReportOperation), async (c) =>
  answer(c, await thread(c, c.req.param("id")).reportOperation(operationId(c), JSON.stringify(c.req.valid("json")), "caller", idempotencyKey(c))),
);

operations.get("/threads/:id/subscriptions", async (c) => answer(c, await thread(c, c.req.param("id")).subscriptionList()));

operations.post("/threads/:id/subscriptions", jsonBody(Subscribe), async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await subscribe(c.env, c.var.config, id, c.req.valid("json")), 201);
});

operations.delete("/threads/:id/subscriptions/:watch", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await unsubscribe(c.env, id, c.req.param("watch")));
});

operations.post("/threads/:id/events", jsonBody(CycleEvent), async (c) => {
  const { data, ...event } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  return answer(c, await stub.cycleEvent({ cycle: event.kind, ...(event.step ? { step: event.step } : {}), ...(event.child ? { child: event.child } : {}), ...(event.status ? { status: event.status } : {}), ...(event.text ? { text: event.text } : {}) }, data === undefined ? undefined : JSON.stringify(data)), 201);
});

// A refusal is a normal result with reasons: 200 either way (SPEC "Client conventions").
operations.post("/threads/:id/gate", jsonBody(GateRequest), async (c) => answer(c, await thread(c, c.req.param("id")).gate(c.req.valid("json"))));

operations.post("/threads/:id/merge", jsonBody(MergeRequest), async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  return answer(c, await mergeChild(c.env, id, c.req.valid("json").child));
});
