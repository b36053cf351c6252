import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { SummaryRequest } from "../../../src/api/engine.js";
import { sessionAccess, type NetworkDeps } from "../engines/access.js";
import { providerOf } from "../../../src/rules/spawn.js";
import { piModel } from "../engines/providers.js";
import { withSessionRoute } from "../engines/session-network.js";
import { piPackages } from "../pi-packages.js";

/** Why a curator's answer is no summary: an error, an empty text, a stream cut off or stopped at its output limit. */
function unusable(m: AssistantMessage): string | null {
  if (m.stopReason === "error" || m.stopReason === "aborted") return m.errorMessage ?? m.stopReason;
  if (m.stopReason === "length") return "the summary was cut at the model's output limit";
  if (m.api !== "anthropic-messages" && m.usage.input + m.usage.output === 0) return "the provider's stream ended before its last frame";
  const text = m.content.map((c) => (c.type === "text" ? c.text : "")).join("").trim();
  return text === "" ? "the model wrote no text" : null;
}

/** Who a curator call is for and on which accounts: what a summary and a reflection share. */
export type CuratorScope = Pick<SummaryRequest, "threadId" | "models" | "account" | "accountChoice" | "proxyEnv" | "timeoutMs">;

/**
 * One curator model call: the curator model, then its fallback, each once, on the
 * accounts a `pi` turn of the thread would use. `document` rides in the system prompt, as
 * what the request is about. A failure of every model is an answer too.
 */
export async function askCurator(
  req: CuratorScope,
  network: NetworkDeps,
  prompt: string,
  document: string,
  ask: string,
  /** Why an answer is no use (it does not parse), so the next model is asked; null when it is. */
  useless: (text: string) => string | null = () => null,
): Promise<{ text: string; model: string } | { error: string }> {
  const errors: string[] = [];
  for (const id of req.models) {
    // The thread's own account serves only the models of its provider; another model takes the workspace's.
    const account = req.account && network.pool.has(req.account) && network.pool.provider(req.account) === providerOf("pi", id) ? req.account : null;
    const chosen = await sessionAccess(network, { ...req, account, turnId: "curator", engine: "pi", model: id, permissions: "deny", cwd: null, transcript: [], freshSession: true, window: null, inputs: [], handoffTo: [], delegated: false });
    if ("failure" in chosen) {
      errors.push(`${id}: ${chosen.failure.error}`);
      continue;
    }
    const { access } = chosen;
    const model = piModel(access, id);
    const signal = AbortSignal.timeout(req.timeoutMs);
    const { ai } = await piPackages();
    const message = await withSessionRoute(access.route, () =>
      ai.completeSimple(model, { systemPrompt: document ? `${prompt}\n\n${document}` : prompt, messages: [{ role: "user", content: ask, timestamp: Date.now() }] }, { apiKey: access.apiKey, maxRetries: 0, signal }),
    ).catch((err: unknown): null => {
      errors.push(`${id}: ${(err as Error).message}`);
      return null;
    });
    if (!message) continue;
    const why = signal.aborted ? `no answer within ${req.timeoutMs} ms` : unusable(message);
    if (why) {
      errors.push(`${id}: ${why}`);
      continue;
    }
    const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("").trim();
    const no = useless(text);
    if (no) {
      errors.push(`${id}: ${no}`);
      continue;
    }
    return { text, model: id };
  }
  return { error: errors.join("; ") || "no curator model is configured" };
}
