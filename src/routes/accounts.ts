import { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { engineList } from "../engine-list.js";
import { refusal } from "../http.js";

/** SPEC "Operating the host": `/accounts`. The account pool is a later issue; the engines list is here. */
export const accounts = new Hono<AppEnv>();

accounts.get("/accounts", async (c) => {
  const engines = await engineList(c.env);
  if (!engines) return refusal(503, "the engine host did not answer", "engine-host-unavailable");
  return c.json({ accounts: [], engines });
});
