import { fromOpenAIResponses, type Conversation } from "./conversation.js";
import { openaiError } from "./errors.js";
import { simId } from "./ids.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

type Item = Record<string, unknown>;

function usageOf(reply: Reply) {
  return {
    input_tokens: reply.usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reply.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.usage.input + reply.usage.output,
  };
}

function response(id: string, conv: Conversation, status: "in_progress" | "completed", output: Item[], usage: unknown) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    model: conv.model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
  };
}

function textItem(id: string, text: string, status: "in_progress" | "completed"): Item {
  return { type: "message", id, status, role: "assistant", content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : [] };
}

function toolItem(ids: { id: string; callId: string }, name: string, args: string, status: "in_progress" | "completed"): Item {
  return { type: "function_call", id: ids.id, call_id: ids.callId, name, arguments: args, status };
}

function finalItem(reply: Reply): Item {
  return reply.kind === "text"
    ? textItem(simId("msg_"), reply.text, "completed")
    : toolItem({ id: simId("fc_"), callId: simId("call_") }, reply.name, reply.arguments, "completed");
}

function frames(reply: Reply, conv: Conversation): Frame[] {
  const out: Frame[] = [];
  const emit = (type: string, fields: Record<string, unknown>, delta = false) =>
    out.push({ event: type, data: { type, sequence_number: out.length, ...fields }, ...(delta ? { delta } : {}) });
  const id = simId("resp_");
  const where = { output_index: 0 };
  emit("response.created", { response: response(id, conv, "in_progress", [], null) });
  emit("response.in_progress", { response: response(id, conv, "in_progress", [], null) });
  let done: Item;
  if (reply.kind === "text") {
    const itemId = simId("msg_");
    const part = { item_id: itemId, ...where, content_index: 0 };
    emit("response.output_item.added", { ...where, item: textItem(itemId, "", "in_progress") });
    emit("response.content_part.added", { ...part, part: { type: "output_text", text: "", annotations: [] } });
    for (const piece of reply.pieces) emit("response.output_text.delta", { ...part, delta: piece, logprobs: [] }, true);
    emit("response.output_text.done", { ...part, text: reply.text, logprobs: [] });
    emit("response.content_part.done", { ...part, part: { type: "output_text", text: reply.text, annotations: [] } });
    done = textItem(itemId, reply.text, "completed");
  } else {
    const ids = { id: simId("fc_"), callId: simId("call_") };
    emit("response.output_item.added", { ...where, item: toolItem(ids, reply.name, "", "in_progress") });
    for (const piece of reply.pieces) emit("response.function_call_arguments.delta", { item_id: ids.id, ...where, delta: piece }, true);
    emit("response.function_call_arguments.done", { item_id: ids.id, ...where, name: reply.name, arguments: reply.arguments });
    done = toolItem(ids, reply.name, reply.arguments, "completed");
  }
  emit("response.output_item.done", { ...where, item: done });
  emit("response.completed", { response: response(id, conv, "completed", [done], usageOf(reply)) });
  return out;
}

function json(reply: Reply, conv: Conversation): unknown {
  return response(simId("resp_"), conv, "completed", [finalItem(reply)], usageOf(reply));
}

export const openaiResponses: Protocol = {
  name: "openai-responses",
  hasApiKey: hasBearer,
  parse: fromOpenAIResponses,
  error: openaiError,
  frames,
  json,
};
