import { Hono } from "hono";
import { FilesQuery, OutlineQuery, ReadQuery, SearchBody, type CodeRoot, type FilesPage, type OutlineAnswer, type ReadAnswer, type SearchAnswer } from "../api/code.js";
import type { AppEnv } from "../http/app-env.js";
import { answer } from "../http/answer.js";
import { jsonBody, valid } from "../http/validate.js";
import { callCode } from "../platform/code-call.js";

/** SPEC capability 5: reads of the registered repositories (docs/code.md), answered by the code service. */
export const code = new Hono<AppEnv>();

code.get("/code/roots", async (c) => answer(c, await callCode<{ roots: CodeRoot[] }>(c.env, "GET", "/roots")));

code.get("/code/files", valid("query", FilesQuery), async (c) => answer(c, await callCode<FilesPage>(c.env, "GET", "/files", c.req.valid("query"))));

code.get("/code/read", valid("query", ReadQuery), async (c) => answer(c, await callCode<ReadAnswer>(c.env, "GET", "/read", c.req.valid("query"))));

code.get("/code/outline", valid("query", OutlineQuery), async (c) => answer(c, await callCode<OutlineAnswer>(c.env, "GET", "/outline", c.req.valid("query"))));

code.post("/code/search", jsonBody(SearchBody), async (c) => answer(c, await callCode<SearchAnswer>(c.env, "POST", "/search", c.req.valid("json"))));
