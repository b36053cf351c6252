import type { Api, AssistantMessage, Message, Model, ToolCall } from "@mariozechner/pi-ai";
import type { TranscriptEntry } from "../../../../src/api/engine.js";

const EMPTY_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * A Responses call id as pi-ai keeps it, `call_…|fc_…`, names the output item too, and
 * OpenAI refuses an item sent back without the reasoning item it followed. The log keeps
 * no reasoning, so calls from earlier turns go back by their call id alone, which the
 * API accepts.
 */
function withoutItemId(callId: string): string {
  return callId.split("|")[0]!;
}

/**
 * The thread's transcript as pi-ai messages. A reply and the tool calls after it form
 * one assistant message, as the model wrote them. A tool call whose result never came
 * (its turn was interrupted or lost) gets a result saying so: providers refuse a
 * conversation with an unanswered tool call.
 */
export function toMessages(entries: TranscriptEntry[], model: Model<Api>): Message[] {
  const out: Message[] = [];
  let assistant: AssistantMessage | null = null;
  const unanswered = new Map<string, string>();
  const flush = () => {
    if (assistant) out.push(assistant);
    assistant = null;
  };
  const settle = () => {
    flush();
    for (const [callId, name] of unanswered)
      out.push({
        role: "toolResult",
        toolCallId: callId,
        toolName: name,
        content: [{ type: "text", text: "(no result: the turn ended before this call finished)" }],
        isError: true,
        timestamp: 0,
      });
    unanswered.clear();
  };
  const current = (): AssistantMessage =>
    (assistant ??= { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: EMPTY_USAGE, stopReason: "stop", timestamp: 0 });
  for (const e of entries) {
    if (e.role === "user") {
      settle();
      out.push({ role: "user", content: e.text, timestamp: 0 });
    } else if (e.role === "assistant") {
      const hasCalls = (assistant as AssistantMessage | null)?.content.some((c) => c.type === "toolCall") ?? false;
      if (hasCalls || unanswered.size > 0) settle();
      current().content.push({ type: "text", text: e.text });
    } else if (e.role === "tool-call") {
      const call: ToolCall = { type: "toolCall", id: withoutItemId(e.callId), name: e.name, arguments: (e.input ?? {}) as Record<string, unknown> };
      const a = current();
      a.content.push(call);
      a.stopReason = "toolUse";
      unanswered.set(call.id, e.name);
    } else {
      flush();
      unanswered.delete(withoutItemId(e.callId));
      out.push({ role: "toolResult", toolCallId: withoutItemId(e.callId), toolName: e.name, content: [{ type: "text", text: e.output }], isError: e.isError, timestamp: 0 });
    }
  }
  settle();
  return out;
}
