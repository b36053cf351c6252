import { BadRequest } from "./errors.js";

/**
 * One entry of the conversation as the simulator sees it, whatever the protocol.
 * `context` is text the model reads but that is neither a user turn nor a reply
 * (system prompts, instructions, text riding along with Anthropic tool results).
 */
export interface Entry {
  role: "context" | "user" | "assistant" | "tool";
  text: string;
}

export interface Conversation {
  model: string;
  stream: boolean;
  /** Chat completions only: the client asked for the trailing usage chunk. */
  includeUsage: boolean;
  entries: Entry[];
  /**
   * Names of the tools the request offers the model (empty when it offers none). A
   * Responses `namespace` tool's functions are named `<namespace>__<function>`.
   */
  tools: string[];
  /** Responses only: each namespaced function's qualified name, and what a call to it names. */
  namespaced: Record<string, { namespace: string; name: string }>;
  /** Responses only: extra output the client asked for (`reasoning.encrypted_content`). */
  include: string[];
  /** Anthropic only: the request enables extended thinking, so thinking blocks may be sent. */
  thinking: boolean;
  /** Image parts anywhere in the request (`image_url`, `input_image`, Anthropic `image` blocks). */
  images: number;
}

type Json = Record<string, unknown>;

/**
 * Coding-agent CLIs put their own context into user messages inside these tags; it is
 * not what the person wrote, so the echo, the directives and a summary leave it out.
 */
const CLIENT_CONTEXT = /<(system-reminder|environment_context|turn_aborted)>[\s\S]*?<\/\1>\s*/g;

/** What the person wrote of a user message. */
export function personText(text: string): string {
  return text.replace(CLIENT_CONTEXT, "");
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function requireBody(body: unknown): Json {
  if (!isObject(body)) throw new BadRequest("The request body must be a JSON object.");
  if (typeof body.model !== "string" || body.model === "") throw new BadRequest("Missing required parameter: 'model'.");
  if (body.stream !== undefined && typeof body.stream !== "boolean") throw new BadRequest("Invalid type for 'stream': expected a boolean.");
  return body;
}

function requireArray(body: Json, field: string): unknown[] {
  const value = body[field];
  if (!Array.isArray(value)) throw new BadRequest(`Missing required parameter: '${field}' (an array).`);
  return value;
}

function requireItem(item: unknown, where: string): Json {
  if (!isObject(item)) throw new BadRequest(`Invalid value for '${where}': expected an object.`);
  return item;
}

/** Text of a string or of the text-bearing parts of a content array; images and the like count as nothing. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
    .filter((t) => t !== "")
    .join("\n");
}

/** A Responses `namespace` tool's functions (codex offers each MCP server's tools as one). */
function namespacedTools(body: Json): Conversation["namespaced"] {
  const out: Conversation["namespaced"] = {};
  for (const t of Array.isArray(body.tools) ? body.tools : [])
    if (isObject(t) && t.type === "namespace" && typeof t.name === "string" && Array.isArray(t.tools))
      for (const f of t.tools) if (isObject(f) && typeof f.name === "string") out[`${t.name}__${f.name}`] = { namespace: t.name, name: f.name };
  return out;
}

/** Tool names in any of the three shapes: `{function: {name}}` (chat), `{name}` (Responses, Anthropic), a Responses namespace's functions. */
function toolNames(body: Json): string[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools.flatMap((t) => {
    if (!isObject(t)) return [];
    if (isObject(t.function) && typeof t.function.name === "string") return [t.function.name];
    if (t.type === "namespace") return Object.keys(namespacedTools({ tools: [t] }));
    return typeof t.name === "string" ? [t.name] : [];
  });
}

const IMAGE_PARTS = new Set(["image_url", "input_image", "image"]);

/** Image parts anywhere in a request body, in any of the three protocols' shapes. */
function countImages(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countImages(v), 0);
  if (!isObject(value)) return 0;
  const own = typeof value.type === "string" && IMAGE_PARTS.has(value.type) ? 1 : 0;
  return Object.values(value).reduce((n: number, v) => n + countImages(v), own);
}

function baseConversation(body: Json, entries: Entry[]): Conversation {
  return {
    model: body.model as string,
    stream: body.stream === true,
    includeUsage: false,
    entries,
    tools: toolNames(body),
    namespaced: namespacedTools(body),
    include: Array.isArray(body.include) ? body.include.filter((i): i is string => typeof i === "string") : [],
    thinking: isObject(body.thinking) && body.thinking.type !== "disabled",
    images: countImages(body.messages ?? body.input),
  };
}

function unanswered(ids: string[]): BadRequest {
  return new BadRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(", ")}`,
  );
}

/**
 * Chat completions refuses a history whose tool calls and tool messages do not pair up:
 * each call answered by a tool message before the conversation goes on, no tool message
 * without a call.
 */
function checkToolPairs(messages: Json[]): void {
  let pending: string[] = [];
  for (const msg of messages) {
    if (msg.role === "tool") {
      const id = String(msg.tool_call_id);
      if (!pending.includes(id)) throw new BadRequest(`Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`);
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0)
      throw unanswered(pending);
    if (msg.role === "assistant" && Array.isArray(msg.tool_calls)) pending = msg.tool_calls.filter(isObject).map((c) => String(c.id));
  }
  if (pending.length > 0)
    throw unanswered(pending);
}

export function fromOpenAIChat(raw: unknown): Conversation {
  const body = requireBody(raw);
  const entries = requireArray(body, "messages").map((m, i): Entry => {
    const msg = requireItem(m, `messages[${i}]`);
    switch (msg.role) {
      case "user":
        return { role: "user", text: textOf(msg.content) };
      case "assistant": {
        const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
        const args = calls.map((c) => (isObject(c) && isObject(c.function) && typeof c.function.arguments === "string" ? c.function.arguments : ""));
        return { role: "assistant", text: [textOf(msg.content), ...args].filter((t) => t !== "").join("\n") };
      }
      case "tool":
      case "function":
        return { role: "tool", text: textOf(msg.content) };
      case "system":
      case "developer":
        return { role: "context", text: textOf(msg.content) };
      default:
        throw new BadRequest(`Invalid value for 'messages[${i}].role': expected one of system, developer, user, assistant, tool.`);
    }
  });
  checkToolPairs((body.messages as unknown[]).filter(isObject));
  const options = body.stream_options;
  return { ...baseConversation(body, entries), includeUsage: isObject(options) && options.include_usage === true };
}

export function fromOpenAIResponses(raw: unknown): Conversation {
  const body = requireBody(raw);
  const entries: Entry[] = [];
  if (typeof body.instructions === "string") entries.push({ role: "context", text: body.instructions });
  if (typeof body.input === "string") {
    entries.push({ role: "user", text: body.input });
    return baseConversation(body, entries);
  }
  requireArray(body, "input").forEach((it, i) => {
    const item = requireItem(it, `input[${i}]`);
    switch (item.type) {
      case "function_call":
        entries.push({ role: "assistant", text: typeof item.arguments === "string" ? item.arguments : "" });
        return;
      case "custom_tool_call":
        entries.push({ role: "assistant", text: typeof item.input === "string" ? item.input : "" });
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        entries.push({ role: "tool", text: textOf(item.output) });
        return;
      case "message":
      case undefined:
        break;
      default:
        // Reasoning items, item references and the like carry nothing the simulator reacts to.
        return;
    }
    switch (item.role) {
      case "user":
        entries.push({ role: "user", text: textOf(item.content) });
        return;
      case "assistant":
        entries.push({ role: "assistant", text: textOf(item.content) });
        return;
      case "system":
      case "developer":
        entries.push({ role: "context", text: textOf(item.content) });
        return;
      default:
        throw new BadRequest(`Invalid value for 'input[${i}].role': expected one of system, developer, user, assistant.`);
    }
  });
  return baseConversation(body, entries);
}

export function fromAnthropicMessages(raw: unknown): Conversation {
  const body = requireBody(raw);
  const entries: Entry[] = [];
  const system = textOf(body.system);
  if (system !== "") entries.push({ role: "context", text: system });
  requireArray(body, "messages").forEach((m, i) => {
    const msg = requireItem(m, `messages[${i}]`);
    if (msg.role !== "user" && msg.role !== "assistant")
      throw new BadRequest(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    const blocks = typeof msg.content === "string" ? [{ type: "text", text: msg.content }] : Array.isArray(msg.content) ? msg.content : [];
    const texts: string[] = [];
    const results: Entry[] = [];
    for (const block of blocks) {
      if (!isObject(block)) continue;
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
      else if (block.type === "tool_use") texts.push(JSON.stringify(block.input ?? {}));
      else if (block.type === "tool_result") results.push({ role: "tool", text: textOf(block.content) });
    }
    const text = texts.join("\n");
    if (msg.role === "assistant") entries.push({ role: "assistant", text });
    // Anthropic returns tool results inside a user message; that message is not a new user turn.
    else if (results.length > 0) entries.push(...results, ...(text === "" ? [] : [{ role: "context" as const, text }]));
    else entries.push({ role: "user", text });
  });
  return baseConversation(body, entries);
}
