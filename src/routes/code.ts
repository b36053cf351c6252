import { Hono } from "hono";
import type { AppEnv } from "../http/app-env.js";
import { answerBody } from "../http/answer.js";
import { codeBody } from "../platform/code-call.js";
import { serve } from "../http/serve.js";

/**
 * SPEC capability 5: reads of the registered repositories (docs/code.md), answered by the
 * code service; its answers stream through as it wrote them (`codeBody`).
 */
export const code = new Hono<AppEnv>();

serve(code, "GET /code/roots", async (c) => answerBody(await codeBody(c.env, "GET", "/roots")));

serve(code, "GET /code/files", async (c) => answerBody(await codeBody(c.env, "GET", "/files", c.req.valid("query"))));

serve(code, "GET /code/read", async (c) => answerBody(await codeBody(c.env, "GET", "/read", c.req.valid("query"))));

serve(code, "GET /code/outline", async (c) => answerBody(await codeBody(c.env, "GET", "/outline", c.req.valid("query"))));

serve(code, "POST /code/search", async (c) => answerBody(await codeBody(c.env, "POST", "/search", c.req.valid("json"))));
