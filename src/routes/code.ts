import { Hono } from "hono";
import { type CodeRoot, type FilesPage, type OutlineAnswer, type ReadAnswer, type SearchAnswer } from "../api/code.js";
import type { AppEnv } from "../http/app-env.js";
import { answer } from "../http/answer.js";
import { callCode } from "../platform/code-call.js";
import { serve } from "../http/serve.js";

/** SPEC capability 5: reads of the registered repositories (docs/code.md), answered by the code service. */
export const code = new Hono<AppEnv>();

serve(code, "GET /code/roots", async (c) => answer(c, await callCode<{ roots: CodeRoot[] }>(c.env, "GET", "/roots")));

serve(code, "GET /code/files", async (c) => answer(c, await callCode<FilesPage>(c.env, "GET", "/files", c.req.valid("query"))));

serve(code, "GET /code/read", async (c) => answer(c, await callCode<ReadAnswer>(c.env, "GET", "/read", c.req.valid("query"))));

serve(code, "GET /code/outline", async (c) => answer(c, await callCode<OutlineAnswer>(c.env, "GET", "/outline", c.req.valid("query"))));

serve(code, "POST /code/search", async (c) => answer(c, await callCode<SearchAnswer>(c.env, "POST", "/search", c.req.valid("json"))));
