import { fromOpenAIResponses, type Conversation } from "./conversation.js";
import { BadRequest, openaiResponsesError } from "./errors.js";
import { simId } from "./ids.js";
import type { Issued } from "./issued.js";
import { hasBearer, type Protocol } from "./protocol.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

type Item = Record<string, unknown>;

function tokens(text: string): number {
  return text === "" ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

function usageOf(reply: Reply) {
  return {
    input_tokens: reply.usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reply.usage.output,
    output_tokens_details: { reasoning_tokens: tokens(reply.reasoning?.text ?? "") },
    total_tokens: reply.usage.input + reply.usage.output,
  };
}

type Status = "in_progress" | "completed" | "incomplete" | "failed";

function response(id: string, conv: Conversation, status: Status, output: Item[], usage: unknown, extra: Item = {}) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    model: conv.model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
    ...extra,
  };
}

/** The items of one reply with their ids, in output order: reasoning, message, function calls. */
interface Planned {
  item: (status: "in_progress" | "completed") => Item;
  stream: (emit: Emit, outputIndex: number) => void;
}

type Emit = (type: string, fields: Record<string, unknown>, delta?: boolean) => void;

function plan(reply: Reply, conv: Conversation, issued: Issued): Planned[] {
  const planned: Planned[] = [];
  const reasoningId = reply.reasoning ? simId("rs_") : null;
  const follows = (id: string) => {
    if (reasoningId) issued.followed(id, reasoningId);
  };
  if (reply.reasoning && reasoningId) {
    const { text, pieces } = reply.reasoning;
    const encrypted = conv.include.includes("reasoning.encrypted_content") ? { encrypted_content: issued.sign(reasoningId, conv.model) } : {};
    planned.push({
      item: (status) => ({ type: "reasoning", id: reasoningId, summary: status === "completed" ? [{ type: "summary_text", text }] : [], ...(status === "completed" ? encrypted : {}) }),
      stream: (emit, output_index) => {
        const at = { item_id: reasoningId, output_index, summary_index: 0 };
        emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
        for (const delta of pieces) emit("response.reasoning_summary_text.delta", { ...at, delta }, true);
        emit("response.reasoning_summary_text.done", { ...at, text });
        emit("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text } });
      },
    });
  }
  if (reply.text) {
    const { text, pieces } = reply.text;
    const id = simId("msg_");
    follows(id);
    planned.push({
      item: (status) => ({ type: "message", id, status, role: "assistant", content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : [] }),
      stream: (emit, output_index) => {
        const part = { item_id: id, output_index, content_index: 0 };
        emit("response.content_part.added", { ...part, part: { type: "output_text", text: "", annotations: [] } });
        for (const delta of pieces) emit("response.output_text.delta", { ...part, delta, logprobs: [] }, true);
        emit("response.output_text.done", { ...part, text, logprobs: [] });
        emit("response.content_part.done", { ...part, part: { type: "output_text", text, annotations: [] } });
      },
    });
  }
  for (const call of reply.calls) {
    const id = simId("fc_");
    const callId = simId("call_");
    follows(id);
    planned.push({
      item: (status) => ({
        type: "function_call",
        id,
        call_id: callId,
        name: call.name,
        ...(call.namespace ? { namespace: call.namespace } : {}),
        arguments: status === "completed" ? call.arguments.text : "",
        status,
      }),
      stream: (emit, output_index) => {
        for (const delta of call.arguments.pieces) emit("response.function_call_arguments.delta", { item_id: id, output_index, delta }, true);
        emit("response.function_call_arguments.done", { item_id: id, output_index, name: call.name, arguments: call.arguments.text });
      },
    });
  }
  return planned;
}

function finalStatus(reply: Reply): "completed" | "incomplete" {
  return reply.stop === "length" ? "incomplete" : "completed";
}

function frames(reply: Reply, conv: Conversation, issued: Issued): Frame[] {
  const out: Frame[] = [];
  const emit: Emit = (type, fields, delta = false) => out.push({ event: type, data: { type, sequence_number: out.length, ...fields }, ...(delta ? { delta } : {}) });
  const id = simId("resp_");
  emit("response.created", { response: response(id, conv, "in_progress", [], null) });
  emit("response.in_progress", { response: response(id, conv, "in_progress", [], null) });
  const items = plan(reply, conv, issued);
  items.forEach((p, output_index) => {
    emit("response.output_item.added", { output_index, item: p.item("in_progress") });
    p.stream(emit, output_index);
    emit("response.output_item.done", { output_index, item: p.item("completed") });
  });
  const status = finalStatus(reply);
  emit(`response.${status}`, { response: response(id, conv, status, items.map((p) => p.item("completed")), usageOf(reply)) });
  return out;
}

const FAILED = "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center if you keep seeing this error.";

/** `error`: the stream's own error event; `response.failed`: the response ends as failed. Neither is followed by anything. */
function failure(kind: "stream-error" | "stream-failed", conv: Conversation, sent: Frame[]): Frame[] {
  const sequence_number = sent.length;
  if (kind === "stream-error") return [{ event: "error", data: { type: "error", code: "server_error", message: FAILED, param: null, sequence_number } }];
  const id = (sent[0]?.data as { response?: { id?: string } } | undefined)?.response?.id ?? simId("resp_");
  const failed = response(id, conv, "failed", [], null, { error: { code: "server_error", message: FAILED } });
  return [{ event: "response.failed", data: { type: "response.failed", sequence_number, response: failed } }];
}

function json(reply: Reply, conv: Conversation, issued: Issued): unknown {
  return response(simId("resp_"), conv, finalStatus(reply), plan(reply, conv, issued).map((p) => p.item("completed")), usageOf(reply));
}

function isItem(v: unknown): v is Item {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const CALLS = new Set(["function_call", "custom_tool_call"]);
const OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

/**
 * What the Responses API refuses in an input list: an output no call asked for, a call
 * left without its output, an item sent back without the reasoning item it followed,
 * reasoning whose encrypted content was not issued for it by this model.
 */
function checkItems(body: unknown, issued: Issued): void {
  const input = isItem(body) && Array.isArray(body.input) ? body.input.filter(isItem) : [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  const reasoning = new Set<string>();
  for (const item of input) {
    const id = typeof item.id === "string" ? item.id : null;
    if (item.type === "reasoning" && id) {
      if (typeof item.encrypted_content === "string" && !issued.verifySigned(id, item.encrypted_content, isItem(body) ? String(body.model) : ""))
        throw new BadRequest(`The encrypted content for item ${id} could not be verified.`);
      reasoning.add(id);
      continue;
    }
    const required = id ? issued.reasoningBefore(id) : undefined;
    if (required && !reasoning.has(required)) throw new BadRequest(`Item '${id}' of type '${String(item.type)}' was provided without its required 'reasoning' item: '${required}'.`);
    const callId = typeof item.call_id === "string" ? item.call_id : null;
    if (CALLS.has(String(item.type)) && callId) calls.add(callId);
    if (OUTPUTS.has(String(item.type)) && callId) {
      if (!calls.has(callId)) throw new BadRequest(`No tool call found for function call output with call_id ${callId}.`);
      answered.add(callId);
    }
  }
  for (const callId of calls) if (!answered.has(callId)) throw new BadRequest(`No tool output found for function call ${callId}.`);
}

export const openaiResponses: Protocol = {
  name: "openai-responses",
  hasApiKey: hasBearer,
  parse: (body, _headers, issued) => {
    const conv = fromOpenAIResponses(body);
    checkItems(body, issued);
    return conv;
  },
  error: openaiResponsesError,
  frames,
  failure,
  json,
};
