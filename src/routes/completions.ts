import { Hono, type Context } from "hono";
import { accountPool } from "../platform/account-pool.js";
import { accountScope, scopedAccounts } from "../rules/accounts.js";
import {
  ChatCompletionRequest,
  COMPLETIONS_CODES as CODES,
  SESSION_HEADER,
  SESSION_LABEL_MAX,
  TRAFFIC_HEADER,
  TRAFFIC_KINDS,
  WORKSPACE_HEADER,
  type CompletionAttempt,
  type CompletionCall,
  type CompletionEventBody,
  type CompletionReport,
  type CompletionUsage,
  type CompletionsError,
  type TrafficKind,
} from "../api/completions.js";
import { Name } from "../api/threads.js";
import { Refused } from "../http/answer.js";
import type { AppEnv } from "../http/app-env.js";
import { completionsThreadId, recordCompletion } from "../flows/completions-thread.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../rules/json-depth.js";
import { ndjson } from "../shared/ndjson.js";
import { issuesSentence } from "../shared/issues.js";
import { serve } from "../http/serve.js";

/** SPEC "Completions": an OpenAI-compatible endpoint over the workspace's accounts (docs/completions.md). */
export const completions = new Hono<AppEnv>();

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  404: "invalid_request_error",
  409: "account_error",
  429: "rate_limit_error",
  502: "api_error",
  503: "api_error",
};

/** A refusal in the completions endpoint's own (OpenAI) shape, thrown as every other refusal is. */
function oaiRefused(status: number, code: string, message: string, retryAfterS?: number): never {
  const body: CompletionsError = { error: { message, type: ERROR_TYPES[status] ?? "api_error", code, param: null } };
  throw new Refused(status, body, retryAfterS ? { "retry-after": String(retryAfterS) } : undefined);
}

interface Caller {
  workspace: string;
  session: string | null;
  traffic: TrafficKind;
}

function caller(c: Context<AppEnv>): Caller {
  const config = c.var.config;
  const workspace = c.req.header(WORKSPACE_HEADER) || config.completionsDefaultWorkspace;
  if (!workspace)
    oaiRefused(400, CODES.unknownWorkspace, `Name the workspace to charge in the ${WORKSPACE_HEADER} header (this host sets no default workspace).`);
  const known = config.workspaces ? config.workspaces.has(workspace) : Name.safeParse(workspace).success;
  if (!known) oaiRefused(400, CODES.unknownWorkspace, `No workspace ${JSON.stringify(workspace)} on this host.`);
  const session = c.req.header(SESSION_HEADER) ?? null;
  if (session !== null && session.length > SESSION_LABEL_MAX)
    oaiRefused(400, CODES.sessionLabelTooLong, `${SESSION_HEADER} is ${session.length} characters; at most ${SESSION_LABEL_MAX}.`);
  const traffic = c.req.header(TRAFFIC_HEADER) ?? "work";
  if (!(TRAFFIC_KINDS as readonly string[]).includes(traffic))
    oaiRefused(400, CODES.badTrafficKind, `${TRAFFIC_HEADER} is work or smoke, not ${JSON.stringify(traffic)}.`);
  return { workspace, session, traffic: traffic as TrafficKind };
}

/** The body, checked: one model call with text only. */
async function request(c: Context<AppEnv>): Promise<ChatCompletionRequest> {
  let raw: unknown;
  try {
    raw = JSON.parse(await c.req.text());
  } catch (err) {
    oaiRefused(400, CODES.invalidRequest, `The body is not valid JSON: ${(err as Error).message}`);
  }
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) oaiRefused(400, CODES.invalidRequest, `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  const parsed = ChatCompletionRequest.safeParse(raw);
  if (!parsed.success)
    oaiRefused(400, CODES.invalidRequest, issuesSentence(parsed.error));
  const body = parsed.data;
  for (const [i, m] of body.messages.entries())
    if (Array.isArray(m.content)) {
      const other = m.content.find((p) => p.type !== "text");
      if (other)
        oaiRefused(400, CODES.imageNotSupported, `messages.${i}.content has a ${other.type} part: this endpoint takes text only (no images, audio or files).`);
    }
  const tooled = ["tools", "functions", "tool_choice", "function_call"].find((k) => k in body);
  if (tooled) oaiRefused(400, CODES.toolsNotSupported, `${tooled}: this endpoint makes one model call without tools.`);
  return body;
}

/** A refusal of the account pool (`{error, code}`, see src/platform/account-pool.ts) in the OpenAI error shape. */
async function poolRefused(res: Response): Promise<never> {
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  oaiRefused(503, CODES.accountPoolUnavailable, body.error ?? `The account pool answered ${res.status}.`);
}

serve(completions, "GET /v1/models", async (c) => {
  let res: Response;
  try {
    res = await accountPool(c.env, "/models");
  } catch {
    oaiRefused(503, CODES.accountPoolUnavailable, "The account pool did not answer.");
  }
  if (!res.ok) return poolRefused(res);
  return new Response(res.body, { headers: { "content-type": "application/json" } });
});

/** The OpenAI SDK's `models.retrieve`: one routable model, a deprecated one too. */
serve(completions, "GET /v1/models/:id", async (c) => {
  const id = c.req.param("id");
  // Encoded, `.` and `..` stay dot segments, which URL parsing would turn into another path of the account service.
  if (id === "." || id === "..") oaiRefused(404, CODES.modelNotFound, `The model ${JSON.stringify(id)} does not exist on this host.`);
  let res: Response;
  try {
    res = await accountPool(c.env, `/models/${encodeURIComponent(id)}`);
  } catch {
    oaiRefused(503, CODES.accountPoolUnavailable, "The account pool did not answer.");
  }
  if (res.status === 404) oaiRefused(404, CODES.modelNotFound, `The model ${JSON.stringify(id)} does not exist on this host.`);
  if (!res.ok) return poolRefused(res);
  return new Response(res.body, { headers: { "content-type": "application/json" } });
});

serve(completions, "POST /v1/chat/completions", async (c) => {
  const who = caller(c);
  const body = await request(c);
  const config = c.var.config;
  const started = Date.now();
  const threadId = await completionsThreadId(c.env, who.workspace);
  const call: CompletionCall = { accounts: scopedAccounts(config, accountScope(config, who.workspace)), threadId, request: body };
  const record = (outcome: CompletionEventBody["outcome"], code: string | null, account: string | null, usage: CompletionUsage | null, attempts: CompletionAttempt[]) =>
    recordCompletion(c.env, config, who.workspace, threadId, {
      model: body.model,
      account,
      outcome,
      code,
      usage,
      latencyMs: Date.now() - started,
      traffic: who.traffic,
      session: who.session,
      stream: body.stream === true,
      attempts,
    }).catch((err: unknown) => console.error(`completions of ${who.workspace}: ${(err as Error).message}`));

  let res: Response;
  try {
    res = await accountPool(c.env, "/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
      signal: c.req.raw.signal,
    });
  } catch {
    await record("failed", CODES.accountPoolUnavailable, null, null, []);
    oaiRefused(503, CODES.accountPoolUnavailable, "The account pool did not answer.");
  }
  if (!res.ok || !res.body) {
    await record("failed", CODES.accountPoolUnavailable, null, null, []);
    return poolRefused(res);
  }
  const reports = ndjson(res.body) as AsyncGenerator<CompletionReport>;
  const first = (await reports.next()).value as CompletionReport | undefined;
  if (!first || first.type === "error") {
    const e = first ?? { status: 502, code: CODES.upstreamError, message: "The account pool ended the call without an answer.", attempts: [] };
    await record("failed", e.code, null, null, e.attempts);
    oaiRefused(e.status, e.code, e.message, "retryAfterS" in e ? e.retryAfterS : undefined);
  }
  const account = first.type === "start" ? first.account : null;

  // The pool's reports are read to their end, not cancelled after the last that matters:
  // a cancelled body costs workerd its connection to the pool, and the next call a new one.
  if (body.stream !== true) {
    let completion: Record<string, unknown> | null = null;
    let last: CompletionReport | null = null;
    for await (const r of reports) {
      if (last) continue;
      if (r.type === "result") completion = r.completion;
      else if (r.type === "end" || r.type === "error") last = r;
    }
    if (last?.type === "end") {
      await record("completed", null, account, last.usage, last.attempts);
      return c.json(completion ?? {});
    }
    if (last?.type === "error") {
      await record("failed", last.code, account, null, last.attempts);
      oaiRefused(last.status, last.code, last.message);
    }
    await record("failed", CODES.upstreamError, account, null, []);
    oaiRefused(502, CODES.upstreamError, "The account pool ended the call before its answer.");
  }

  // Streaming: from here on every outcome is a frame, an error included.
  const wantsUsage = body.stream_options?.include_usage === true;
  const encoder = new TextEncoder();
  const frame = (data: unknown) => encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  const out = new ReadableStream<Uint8Array>({
    async start(controller) {
      let ended = false;
      const close = () => {
        try {
          controller.close();
        } catch {
          // Already closed by a departed caller.
        }
      };
      try {
        for await (const r of reports) {
          if (ended) continue;
          if (r.type === "chunk") {
            const choices = r.data.choices as unknown[] | undefined;
            if (!wantsUsage && Array.isArray(choices) && choices.length === 0) continue;
            const { usage, ...rest } = r.data;
            controller.enqueue(frame(wantsUsage ? { ...rest, usage } : rest));
          } else if (r.type === "end") {
            controller.enqueue(frame("[DONE]"));
            await record("completed", null, account, r.usage, r.attempts);
            ended = true;
            close();
          } else if (r.type === "error") {
            controller.enqueue(frame({ error: { message: r.message, type: ERROR_TYPES[r.status] ?? "api_error", code: r.code, param: null } }));
            await record("failed", r.code, account, null, r.attempts);
            ended = true;
            close();
          }
        }
        if (!ended) {
          controller.enqueue(frame({ error: { message: "The account pool ended the stream early.", type: "api_error", code: CODES.upstreamError, param: null } }));
          await record("failed", CODES.upstreamError, account, null, []);
        }
      } catch {
        // The caller went away, or the pool's stream broke: nothing more can be told. Once
        // the call's outcome is recorded, a break in reading the rest changes nothing.
        if (!ended) await record("failed", CODES.upstreamError, account, null, []);
      }
      close();
    },
  });
  return new Response(out, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" },
  });
}, ["body"]);
