import type { IncomingHttpHeaders } from "node:http";
import { fromAnthropicMessages, type Conversation } from "./conversation.js";
import { anthropicError, BadRequest } from "./errors.js";
import { simId } from "./ids.js";
import type { Issued } from "./issued.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply, Stop } from "./reply.js";
import type { Frame } from "./sse.js";

const STOP: Record<Stop, string> = { end: "end_turn", tool: "tool_use", length: "max_tokens" };

function message(id: string, conv: Conversation, content: unknown[], stop: string | null, usage: { input_tokens: number; output_tokens: number }) {
  return { id, type: "message", role: "assistant", model: conv.model, content, stop_reason: stop, stop_sequence: null, usage };
}

/** A content block: its whole form, and how it streams. */
interface Block {
  whole: Record<string, unknown>;
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  /** Sent after the deltas, before the block stops (a thinking block's signature). */
  closing: Record<string, unknown>[];
}

/** Thinking comes only when the request enables it, as the API does; it then opens the message. */
function blocks(reply: Reply, conv: Conversation, issued: Issued): Block[] {
  const out: Block[] = [];
  const thinking = conv.thinking && reply.reasoning ? reply.reasoning : null;
  if (thinking) {
    const signature = issued.sign(thinking.text, conv.model);
    out.push({
      whole: { type: "thinking", thinking: thinking.text, signature },
      start: { type: "thinking", thinking: "", signature: "" },
      deltas: thinking.pieces.map((p) => ({ type: "thinking_delta", thinking: p })),
      closing: [{ type: "signature_delta", signature }],
    });
  }
  if (reply.text)
    out.push({
      whole: { type: "text", text: reply.text.text },
      start: { type: "text", text: "" },
      deltas: reply.text.pieces.map((p) => ({ type: "text_delta", text: p })),
      closing: [],
    });
  for (const call of reply.calls) {
    const id = simId("toolu_");
    if (thinking) issued.followed(id, "thinking");
    out.push({
      whole: { type: "tool_use", id, name: call.name, input: call.input },
      start: { type: "tool_use", id, name: call.name, input: {} },
      deltas: call.arguments.pieces.map((p) => ({ type: "input_json_delta", partial_json: p })),
      closing: [],
    });
  }
  return out;
}

function frames(reply: Reply, conv: Conversation, issued: Issued): Frame[] {
  const out: Frame[] = [];
  const emit = (type: string, fields: Record<string, unknown>, delta = false) => out.push({ event: type, data: { type, ...fields }, ...(delta ? { delta } : {}) });
  emit("message_start", { message: message(simId("msg_"), conv, [], null, { input_tokens: reply.usage.input, output_tokens: 0 }) });
  blocks(reply, conv, issued).forEach((block, index) => {
    emit("content_block_start", { index, content_block: block.start });
    if (index === 0) emit("ping", {});
    for (const delta of block.deltas) emit("content_block_delta", { index, delta }, true);
    for (const delta of block.closing) emit("content_block_delta", { index, delta });
    emit("content_block_stop", { index });
  });
  emit("message_delta", { delta: { stop_reason: STOP[reply.stop], stop_sequence: null }, usage: { output_tokens: reply.usage.output } });
  emit("message_stop", {});
  return out;
}

/** Anthropic reports a failure mid-stream as an `error` event, then ends the body. */
function failure(): Frame[] {
  return [{ event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }];
}

function json(reply: Reply, conv: Conversation, issued: Issued): unknown {
  const content = blocks(reply, conv, issued).map((b) => b.whole);
  return message(simId("msg_"), conv, content, STOP[reply.stop], { input_tokens: reply.usage.input, output_tokens: reply.usage.output });
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function contentOf(msg: Json): Json[] {
  return Array.isArray(msg.content) ? msg.content.filter(isObject) : [];
}

function unanswered(at: number, ids: string[]): BadRequest {
  return new BadRequest(
    `messages.${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  );
}

/**
 * What the Messages API refuses beyond the body's shape: a missing version header or
 * `max_tokens`, tool uses and results that do not pair up message to message, thinking
 * blocks whose signature it did not issue for this model, and (with thinking on) a tool-use message of
 * the current tool loop that lost the thinking block it opened with.
 */
function check(body: unknown, headers: IncomingHttpHeaders, issued: Issued): void {
  if (typeof headers["anthropic-version"] !== "string" || headers["anthropic-version"] === "") throw new BadRequest("anthropic-version: header is required");
  if (!isObject(body)) return;
  if (body.max_tokens === undefined) throw new BadRequest("max_tokens: Field required");
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw new BadRequest("max_tokens: Input should be a valid integer greater than 0");
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  let pending: string[] = [];
  messages.forEach((msg, i) => {
    const content = contentOf(msg);
    if (msg.role === "user") {
      const results = content.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id));
      const missing = pending.filter((id) => !results.includes(id));
      if (missing.length > 0) throw unanswered(i, missing);
      const stray = results.findIndex((id) => !pending.includes(id));
      if (stray >= 0)
        throw new BadRequest(`messages.${i}.content.${stray}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${results[stray]}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
      pending = [];
      return;
    }
    if (pending.length > 0) throw unanswered(i, pending);
    content.forEach((b, k) => {
      if (b.type === "thinking" && !issued.verifySigned(String(b.thinking ?? ""), b.signature, String(body.model))) throw new BadRequest(`messages.${i}.content.${k}: Invalid \`signature\` in \`thinking\` block`);
    });
    pending = content.filter((b) => b.type === "tool_use").map((b) => String(b.id));
  });
  if (pending.length > 0) throw unanswered(messages.length - 1, pending);
  const thinkingOn = isObject(body.thinking) && body.thinking.type !== "disabled";
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  if (!thinkingOn || lastAssistant < 0) return;
  const content = contentOf(messages[lastAssistant]!);
  const opened = content.some((b) => b.type === "tool_use" && issued.reasoningBefore(String(b.id)) === "thinking");
  const first = content[0]?.type;
  if (opened && first !== "thinking" && first !== "redacted_thinking")
    throw new BadRequest(
      `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
    );
}

export const anthropicMessages: Protocol = {
  name: "anthropic-messages",
  // Claude clients send x-api-key; OAuth-style clients send a bearer token instead.
  hasApiKey: (headers) => (typeof headers["x-api-key"] === "string" && headers["x-api-key"].trim() !== "") || hasBearer(headers),
  parse: (body, headers, issued) => {
    const conv = fromAnthropicMessages(body);
    check(body, headers, issued);
    return conv;
  },
  error: anthropicError,
  frames,
  failure,
  json,
};
