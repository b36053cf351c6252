import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import { JoinSeat, OfferHandoff, ReplaceSeat } from "../api/seats.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, refused, valueOf } from "../http/answer.js";
import { notWhileDraining } from "../http/drain-gate.js";
import { seqParam } from "../http/query.js";
import { jsonBody } from "../http/validate.js";
import { seatTarget } from "../flows/seat-target.js";
import { thread } from "./thread-stub.js";

/** SPEC capability 2, "Run seats": seats and handoffs (docs/seats.md). */
export const seats = new Hono<AppEnv>();

seats.get("/threads/:id/seats", async (c) => answer(c, await thread(c, c.req.param("id")).seatList()));

seats.post("/threads/:id/seats", notWhileDraining, jsonBody(JoinSeat), async (c) => {
  const { name, role, ...choice } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  const row = valueOf(await stub.get());
  const target = await seatTarget(c.env, c.var.config, row, choice, null);
  return answer(c, await stub.joinSeat(name, target, role ?? null), 201);
});

seats.post("/threads/:id/seats/replace", jsonBody(ReplaceSeat), async (c) => {
  const { name, ...choice } = c.req.valid("json");
  const stub = thread(c, c.req.param("id"));
  const row = valueOf(await stub.get());
  const current = valueOf(await stub.seatList()).seats.find((s) => s.name === name);
  if (!current) refused(404, `thread ${row.id} has no seat ${name}`, CODES.seatNotFound);
  const target = await seatTarget(c.env, c.var.config, row, choice, current);
  return answer(c, await stub.replaceSeat(name, target));
});

seats.delete("/threads/:id/seats/:name", async (c) => answer(c, await thread(c, c.req.param("id")).removeSeat(c.req.param("name"))));

seats.post("/threads/:id/handoff", jsonBody(OfferHandoff), async (c) => {
  const { to, note, context } = c.req.valid("json");
  return answer(c, await thread(c, c.req.param("id")).offerHandoff(to, note ?? null, context ?? "full"), 201);
});

seats.get("/threads/:id/handoffs", async (c) => answer(c, await thread(c, c.req.param("id")).handoffList()));

seats.post("/threads/:id/handoffs/:fromSeq/accept", async (c) =>
  answer(c, await thread(c, c.req.param("id")).acceptHandoff(seqParam(c.req.param("fromSeq"), "fromSeq", CODES.invalidParam))),
);

seats.post("/threads/:id/handoffs/:fromSeq/decline", async (c) =>
  answer(c, await thread(c, c.req.param("id")).declineHandoff(seqParam(c.req.param("fromSeq"), "fromSeq", CODES.invalidParam))),
);
