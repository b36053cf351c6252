import type { Context } from "hono";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "../http/app-env.js";
import { threadOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";
import { isThreadId } from "../shared/ids.js";

/** The thread a route names; a malformed id is as unknown as a missing one and never reaches an object. */
export function thread(c: Context<AppEnv>, id: string) {
  if (!isThreadId(id)) refused(404, "no such thread", CODES.threadNotFound);
  return threadOf(c.env, id);
}
