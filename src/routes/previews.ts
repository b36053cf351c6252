import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import { type Preview } from "../api/operator.js";
import type { AppEnv } from "../http/app-env.js";
import { hostOf, threadOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";
import { newId } from "../shared/ids.js";
import { serve } from "../http/serve.js";

/** SPEC "Operating the host": local server previews (docs/operating.md, "Previews"). */
export const previews = new Hono<AppEnv>();

type StoredPreview = Omit<Preview, "status" | "checkedAt">;

/** How long a preview's port gets to answer before it counts as down. */
const PROBE_MS = 1000;

/** A preview with its status now: up when its port answers HTTP at all. */
async function withStatus(p: StoredPreview): Promise<Preview> {
  let status: Preview["status"] = "down";
  try {
    const res = await fetch(p.url, { signal: AbortSignal.timeout(PROBE_MS), redirect: "manual" });
    await res.body?.cancel();
    status = "up";
  } catch {
    // Refused, reset or silent: down.
  }
  return { ...p, status, checkedAt: new Date().toISOString() };
}

serve(previews, "POST /previews", async (c) => {
  const body = c.req.valid("json");
  const thread = (await threadOf(c.env, body.threadId).get()) as { ok: boolean };
  if (!thread.ok) refused(404, `no thread ${body.threadId}`, CODES.threadNotFound);
  const preview: StoredPreview = {
    id: newId("prv_"),
    threadId: body.threadId,
    port: body.port,
    command: body.command,
    title: body.title ?? null,
    url: `http://127.0.0.1:${body.port}${body.path ?? "/"}`,
    createdAt: new Date().toISOString(),
  };
  await hostOf(c.env).addRecord("preview", preview.id, JSON.stringify(preview));
  return c.json(await withStatus(preview), 201);
});

serve(previews, "GET /previews", async (c) => {
  const all = JSON.parse(await hostOf(c.env).records("preview")) as StoredPreview[];
  return c.json({ previews: await Promise.all(all.map(withStatus)) });
});

serve(previews, "GET /previews/:id", async (c) => {
  const stored = await hostOf(c.env).record("preview", c.req.param("id"));
  if (!stored) refused(404, `no preview ${c.req.param("id")}`, CODES.previewNotFound);
  return c.json(await withStatus(JSON.parse(stored) as StoredPreview));
});

/** Forgets the preview. The server itself belongs to the thread that started it, which stops it. */
serve(previews, "DELETE /previews/:id", async (c) => {
  const id = c.req.param("id");
  if (!(await hostOf(c.env).removeRecord("preview", id))) refused(404, `no preview ${id}`, CODES.previewNotFound);
  return c.json({ removed: id });
});
