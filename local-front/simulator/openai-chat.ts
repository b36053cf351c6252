import { fromOpenAIChat, type Conversation } from "./conversation.js";
import { openaiError } from "./errors.js";
import { simId } from "./ids.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply, Stop } from "./reply.js";
import type { Frame } from "./sse.js";

function usageOf(reply: Reply) {
  return { prompt_tokens: reply.usage.input, completion_tokens: reply.usage.output, total_tokens: reply.usage.input + reply.usage.output };
}

const FINISH: Record<Stop, string> = { end: "stop", tool: "tool_calls", length: "length" };

function frames(reply: Reply, conv: Conversation): Frame[] {
  const head = { id: simId("chatcmpl-"), object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: conv.model };
  // Real OpenAI sends `usage: null` on every chunk once usage was asked for.
  const chunk = (choice: Record<string, unknown>) => ({
    ...head,
    choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }],
    ...(conv.includeUsage ? { usage: null } : {}),
  });
  const out: Frame[] = [{ data: chunk({ delta: { role: "assistant", content: reply.text ? "" : null } }) }];
  // Chat completions has no reasoning in OpenAI's own API; the servers that stream it (vLLM, llama.cpp, DeepSeek) use this field.
  for (const piece of reply.reasoning?.pieces ?? []) out.push({ data: chunk({ delta: { reasoning_content: piece } }), delta: true });
  for (const piece of reply.text?.pieces ?? []) out.push({ data: chunk({ delta: { content: piece } }), delta: true });
  reply.calls.forEach((call, index) => {
    out.push({ data: chunk({ delta: { tool_calls: [{ index, id: simId("call_"), type: "function", function: { name: call.name, arguments: "" } }] } }) });
    for (const piece of call.arguments.pieces) out.push({ data: chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] } }), delta: true });
  });
  out.push({ data: chunk({ delta: {}, finish_reason: FINISH[reply.stop] }) });
  if (conv.includeUsage) out.push({ data: { ...head, choices: [], usage: usageOf(reply) } });
  out.push({ data: "[DONE]" });
  return out;
}

/** OpenAI ends a chat stream that failed with one error object as data, and no `[DONE]`. */
function failure(): Frame[] {
  return [{ data: { error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: "server_error" } } }];
}

function json(reply: Reply, conv: Conversation): unknown {
  const calls = reply.calls.map((c) => ({ id: simId("call_"), type: "function", function: { name: c.name, arguments: c.arguments.text } }));
  const message = {
    role: "assistant",
    content: reply.text?.text ?? null,
    refusal: null,
    ...(reply.reasoning ? { reasoning_content: reply.reasoning.text } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  return {
    id: simId("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: conv.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[reply.stop] }],
    usage: usageOf(reply),
  };
}

export const openaiChat: Protocol = {
  name: "openai-chat",
  hasApiKey: hasBearer,
  parse: fromOpenAIChat,
  error: openaiError,
  frames,
  failure,
  json,
};
