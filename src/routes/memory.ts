import { Hono, type Context } from "hono";
import { CODES } from "../api/errors.js";
import { type Retained } from "../api/memory.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import type { AppEnv } from "../http/app-env.js";
import { answer, refused, valueOf } from "../http/answer.js";
import { retainMemory, workspaceOfThread } from "../flows/memory.js";
import { workspaceOf } from "../platform/stubs.js";
import { thread } from "./thread-stub.js";
import { serve } from "../http/serve.js";

/** SPEC "Workspaces and memory": a workspace's memory (docs/memory.md). */
export const memory = new Hono<AppEnv>();

/** A configured workspace's name, or `default` (the threads spawned without one); any other is refused. */
function memoryWorkspace(c: Context<AppEnv>): string {
  const name = c.req.param("name") ?? "";
  if (name === DEFAULT_WORKSPACE || c.var.config.workspaces?.has(name)) return name;
  refused(404, `no workspace ${name}`, CODES.workspaceNotFound, { workspaces: [DEFAULT_WORKSPACE, ...(c.var.config.workspaces?.keys() ?? [])] });
}

const memoryId = (c: Context<AppEnv>) => {
  const id = c.req.param("id") ?? "";
  if (id.length === 0 || id.length > 100) refused(404, `no memory ${id}`, CODES.memoryNotFound);
  return id;
};

serve(memory, "POST /workspaces/:name/memory/retain", async (c) => {
  const stored = await retainMemory(c.env, memoryWorkspace(c), c.req.valid("json"));
  return answer(c, stored, stored.ok && (stored.value as Retained).duplicate ? 200 : 201);
});

serve(memory, "POST /workspaces/:name/memory/recall", async (c) => c.json(await workspaceOf(c.env, memoryWorkspace(c)).recall(c.req.valid("json"))));

serve(memory, "POST /workspaces/:name/memory/reflect", async (c) => {
  const name = memoryWorkspace(c);
  return answer(c, await workspaceOf(c.env, name).reflect(name, c.req.valid("json").limit));
});

serve(memory, "GET /workspaces/:name/memory", async (c) => c.json(await workspaceOf(c.env, memoryWorkspace(c)).memoryPage(c.req.valid("query"))));

serve(memory, "GET /workspaces/:name/memory/:id", async (c) => answer(c, await workspaceOf(c.env, memoryWorkspace(c)).memory(memoryId(c))));

serve(memory, "PATCH /workspaces/:name/memory/:id", async (c) => answer(c, await workspaceOf(c.env, memoryWorkspace(c)).editMemory(memoryId(c), c.req.valid("json"))));

serve(memory, "DELETE /workspaces/:name/memory/:id", async (c) => answer(c, await workspaceOf(c.env, memoryWorkspace(c)).forgetMemory(memoryId(c))));

// What the thread recorded: retired ones too, unless the query says otherwise.
serve(memory, "GET /threads/:id/memory", async (c) => {
  const id = c.req.param("id");
  thread(c, id);
  const workspace = valueOf(await workspaceOfThread(c.env, id));
  const q = c.req.valid("query");
  return c.json(await workspaceOf(c.env, workspace).memoryPage({ ...q, thread: id, retired: q.retired ?? "include" }));
});
