import { fromAnthropicMessages, type Conversation } from "./conversation.js";
import { anthropicError } from "./errors.js";
import { simId } from "./ids.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

function stopReason(reply: Reply): "end_turn" | "tool_use" {
  return reply.kind === "tool" ? "tool_use" : "end_turn";
}

function message(id: string, conv: Conversation, content: unknown[], stop: string | null, usage: { input_tokens: number; output_tokens: number }) {
  return { id, type: "message", role: "assistant", model: conv.model, content, stop_reason: stop, stop_sequence: null, usage };
}

function frames(reply: Reply, conv: Conversation): Frame[] {
  const out: Frame[] = [];
  const emit = (type: string, fields: Record<string, unknown>, delta = false) =>
    out.push({ event: type, data: { type, ...fields }, ...(delta ? { delta } : {}) });
  emit("message_start", { message: message(simId("msg_"), conv, [], null, { input_tokens: reply.usage.input, output_tokens: 0 }) });
  if (reply.kind === "text") {
    emit("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    emit("ping", {});
    for (const piece of reply.pieces) emit("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } }, true);
  } else {
    emit("content_block_start", { index: 0, content_block: { type: "tool_use", id: simId("toolu_"), name: reply.name, input: {} } });
    emit("ping", {});
    for (const piece of reply.pieces) emit("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: piece } }, true);
  }
  emit("content_block_stop", { index: 0 });
  emit("message_delta", { delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: { output_tokens: reply.usage.output } });
  emit("message_stop", {});
  return out;
}

function json(reply: Reply, conv: Conversation): unknown {
  const block =
    reply.kind === "text" ? { type: "text", text: reply.text } : { type: "tool_use", id: simId("toolu_"), name: reply.name, input: reply.input };
  return message(simId("msg_"), conv, [block], stopReason(reply), { input_tokens: reply.usage.input, output_tokens: reply.usage.output });
}

export const anthropicMessages: Protocol = {
  name: "anthropic-messages",
  // Claude clients send x-api-key; OAuth-style clients send a bearer token instead.
  hasApiKey: (headers) => (typeof headers["x-api-key"] === "string" && headers["x-api-key"].trim() !== "") || hasBearer(headers),
  parse: fromAnthropicMessages,
  error: anthropicError,
  frames,
  json,
};
