import { Hono, type Context } from "hono";
import { CODES } from "../api/errors.js";
import type { AttentionChange } from "../api/operator.js";
import { HEARTBEAT_COMMENT, RETRY_HINT, SSE_HEADERS } from "../api/sse.js";
import type { AppEnv } from "../http/app-env.js";
import { attentionItems } from "../flows/attention-items.js";
import { hostOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";
import { intParam, resumeCursor } from "../http/query.js";
import { serve } from "../http/serve.js";

/** SPEC "Operating the host": items that need a person (docs/operating.md, "Attention"). */
export const attention = new Hono<AppEnv>();

const CHANGES_DEFAULT = 200;
const CHANGES_MAX = 1000;
/** How often a follower's stream looks for new items. */
const FOLLOW_POLL_MS = 1000;

/** The items open now, after recording what changed since the last look. */
async function look(c: Context<AppEnv>) {
  const lookedAt = Date.now();
  const { items, unknown } = await attentionItems(c.env, c.var.config);
  const seq = await hostOf(c.env).refreshAttention(JSON.stringify(items), lookedAt, unknown);
  return { items, seq };
}

async function changesAfter(c: Context<AppEnv>, after: number, limit: number): Promise<AttentionChange[]> {
  return JSON.parse(await hostOf(c.env).attentionChanges(after, limit)) as AttentionChange[];
}

serve(attention, "GET /attention", async (c) => {
  const { items, seq } = await look(c);
  return c.json({ items, seq });
});

serve(attention, "GET /attention/changes", async (c) => {
  const after = resumeCursor(c);
  const limit = intParam(c.req.query("limit"), "limit", CHANGES_DEFAULT, CHANGES_MAX);
  const { seq } = await look(c);
  const changes = await changesAfter(c, after, limit);
  const nextAfter = changes.at(-1)?.seq ?? Math.min(after, seq);
  return c.json({ changes, nextAfter: String(nextAfter), hasMore: nextAfter < seq });
}, ["query"]);

/**
 * SSE of attention changes, with the follow rules: the frame id is the change's seq,
 * `Last-Event-ID` (or `after`) resumes, a heartbeat when idle. The items are gathered
 * from their owners, so the stream looks again every second rather than being pushed.
 */
serve(attention, "GET /attention/follow", async (c) => {
  let after = resumeCursor(c);
  const signal = c.req.raw.signal;
  const encoder = new TextEncoder();
  const heartbeatMs = c.var.config.heartbeatMs;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(RETRY_HINT));
      let quietSince = Date.now();
      try {
        while (!signal.aborted) {
          // A source that fails this second is asked again the next; only a departed reader ends the stream.
          await look(c).catch((err: unknown) => console.error(`attention follow: ${(err as Error).message}`));
          for (;;) {
            const changes = await changesAfter(c, after as number, CHANGES_MAX);
            for (const change of changes) controller.enqueue(encoder.encode(`id: ${change.seq}\ndata: ${JSON.stringify(change)}\n\n`));
            if (changes.length > 0) {
              after = changes.at(-1)!.seq;
              quietSince = Date.now();
            }
            if (changes.length < CHANGES_MAX) break;
          }
          if (Date.now() - quietSince >= heartbeatMs) {
            controller.enqueue(encoder.encode(HEARTBEAT_COMMENT));
            quietSince = Date.now();
          }
          await new Promise((resolve) => setTimeout(resolve, Math.min(FOLLOW_POLL_MS, heartbeatMs)));
        }
      } catch {
        // The reader left (enqueue on a cancelled stream throws): nothing more to send.
      }
      try {
        controller.close();
      } catch {
        // Already closed by the departed reader.
      }
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}, ["query"]);

serve(attention, "GET /attention/:id", async (c) => {
  const { items } = await look(c);
  const item = items.find((i) => i.id === c.req.param("id"));
  if (!item) refused(404, `no open attention item ${c.req.param("id")}`, CODES.attentionNotFound);
  return c.json(item);
});
