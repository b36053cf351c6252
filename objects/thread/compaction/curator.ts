import type { SummaryAnswer, SummaryRequest, TranscriptEntry } from "../../../src/api/engine.js";
import { accountScope } from "../../../src/rules/accounts.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { curatorModels } from "../../../src/platform/config.js";
import type { ThreadAccess } from "../thread-access.js";
import { activeModel } from "../thread-state.js";

/**
 * The curator's summary of `entries` (then its fallback's), through the engine host's
 * `POST /summaries`, on the thread's own account rules; the error when no model wrote one.
 * With no curator configured the thread's own model writes it, on the thread's own
 * account. A summary reduction and a handoff with `context: "summary"` both ask it.
 */
export async function curatorSummary(thread: Pick<ThreadAccess, "env" | "config" | "state">, entries: TranscriptEntry[]): Promise<SummaryAnswer> {
  const c = thread.config;
  const s = thread.state()!;
  const request: SummaryRequest = {
    threadId: s.id,
    models: curatorModels(c, activeModel(s).model),
    account: s.spec.account,
    accountChoice: accountScope(c, s.spec.workspace),
    proxyEnv: s.spec.proxyEnv,
    timeoutMs: c.curatorTimeoutMs,
    entries,
  };
  try {
    const res = await callEngine(thread.env, "/summaries", request);
    const answer = (await res.json()) as { summary?: unknown; model?: unknown; error?: string };
    if (res.ok && typeof answer.summary === "string" && answer.summary !== "" && typeof answer.model === "string") return { summary: answer.summary, model: answer.model };
    return { error: answer.error ?? `the engine host answered ${res.status}` };
  } catch (err) {
    return { error: `the engine host could not be reached: ${(err as Error).message}` };
  }
}
