import { fromOpenAIChat, type Conversation } from "./conversation.js";
import { openaiError } from "./errors.js";
import { simId } from "./ids.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

function usageOf(reply: Reply) {
  return { prompt_tokens: reply.usage.input, completion_tokens: reply.usage.output, total_tokens: reply.usage.input + reply.usage.output };
}

function finishReason(reply: Reply): "stop" | "tool_calls" {
  return reply.kind === "tool" ? "tool_calls" : "stop";
}

function frames(reply: Reply, conv: Conversation): Frame[] {
  const head = { id: simId("chatcmpl-"), object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: conv.model };
  // Real OpenAI sends `usage: null` on every chunk once usage was asked for.
  const chunk = (choice: Record<string, unknown>) => ({
    ...head,
    choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }],
    ...(conv.includeUsage ? { usage: null } : {}),
  });
  const out: Frame[] = [];
  if (reply.kind === "text") {
    out.push({ data: chunk({ delta: { role: "assistant", content: "" } }) });
    for (const piece of reply.pieces) out.push({ data: chunk({ delta: { content: piece } }), delta: true });
  } else {
    const id = simId("call_");
    out.push({ data: chunk({ delta: { role: "assistant", content: null } }) });
    out.push({ data: chunk({ delta: { tool_calls: [{ index: 0, id, type: "function", function: { name: reply.name, arguments: "" } }] } }) });
    for (const piece of reply.pieces)
      out.push({ data: chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }), delta: true });
  }
  out.push({ data: chunk({ delta: {}, finish_reason: finishReason(reply) }) });
  if (conv.includeUsage) out.push({ data: { ...head, choices: [], usage: usageOf(reply) } });
  out.push({ data: "[DONE]" });
  return out;
}

function json(reply: Reply, conv: Conversation): unknown {
  const message =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text, refusal: null }
      : {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: [{ id: simId("call_"), type: "function", function: { name: reply.name, arguments: reply.arguments } }],
        };
  return {
    id: simId("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: conv.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
    usage: usageOf(reply),
  };
}

export const openaiChat: Protocol = {
  name: "openai-chat",
  hasApiKey: hasBearer,
  parse: fromOpenAIChat,
  error: openaiError,
  frames,
  json,
};
