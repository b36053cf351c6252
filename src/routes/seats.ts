import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, refused, valueOf } from "../http/answer.js";
import { seqParam } from "../http/query.js";
import { seatTarget } from "../flows/seat-target.js";
import { thread } from "./thread-stub.js";
import { serve } from "../http/serve.js";

/** SPEC capability 2, "Run seats": seats and handoffs (docs/seats.md). */
export const seats = new Hono<AppEnv>();

serve(seats, "GET /threads/:id/seats", async (c) => answer(c, await thread(c, c.req.param("id")).seatList()));

serve(seats, "POST /threads/:id/seats", async (c) => {
  const { name, role, ...choice } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  const row = valueOf(await stub.get());
  const target = await seatTarget(c.env, c.var.config, row, choice, null);
  return answer(c, await stub.joinSeat(name, target, role ?? null), 201);
});

serve(seats, "POST /threads/:id/seats/replace", async (c) => {
  const { name, ...choice } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  const row = valueOf(await stub.get());
  const current = valueOf(await stub.seatList()).seats.find((s) => s.name === name);
  if (!current) refused(404, `thread ${row.id} has no seat ${name}`, CODES.seatNotFound);
  const target = await seatTarget(c.env, c.var.config, row, choice, current);
  return answer(c, await stub.replaceSeat(name, target));
});

serve(seats, "DELETE /threads/:id/seats/:name", async (c) => answer(c, await thread(c, c.req.param("id")).removeSeat(c.req.param("name"))));

serve(seats, "POST /threads/:id/handoff", async (c) => {
  const { to, note, context } = c.req.valid("json");
  return answer(c, await thread(c, c.req.param("id")).offerHandoff(to, note ?? null, context ?? "full"), 201);
});

serve(seats, "GET /threads/:id/handoffs", async (c) => answer(c, await thread(c, c.req.param("id")).handoffList()));

serve(seats, "POST /threads/:id/handoffs/:fromSeq/accept", async (c) =>
  answer(c, await thread(c, c.req.param("id")).acceptHandoff(seqParam(c.req.param("fromSeq"), "fromSeq", CODES.invalidParam))),
);

serve(seats, "POST /threads/:id/handoffs/:fromSeq/decline", async (c) =>
  answer(c, await thread(c, c.req.param("id")).declineHandoff(seqParam(c.req.param("fromSeq"), "fromSeq", CODES.invalidParam))),
);
