import type { Api, AssistantMessage, AssistantMessageEvent, Context, Model } from "@mariozechner/pi-ai";
import { streamSimple } from "@mariozechner/pi-ai";

export const PROTOCOLS = {
  "openai-chat": { path: "/v1/chat/completions", auth: { authorization: "Bearer x" } },
  "openai-responses": { path: "/v1/responses", auth: { authorization: "Bearer x" } },
  "anthropic-messages": { path: "/v1/messages", auth: { "x-api-key": "x", "anthropic-version": "2023-06-01" } },
} as const;
export type ProtocolName = keyof typeof PROTOCOLS;

/** A minimal request in each protocol's shape carrying one user message. */
export function requestBody(protocol: ProtocolName, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base =
    protocol === "openai-responses"
      ? { model: "sim-1", input: [{ role: "user", content: [{ type: "input_text", text }] }] }
      : protocol === "openai-chat"
        ? { model: "sim-1", messages: [{ role: "user", content: text }] }
        : { model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text }] }] };
  return { ...base, ...extra };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: () => any;
}

export async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export interface SseFrame {
  event?: string;
  data: string;
}

export function parseSse(text: string): SseFrame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: SseFrame = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) frame.event = line.slice(7);
        else if (line.startsWith("data: ")) frame.data += line.slice(6);
      }
      return frame;
    });
}

export type PiApi = "openai-completions" | "openai-responses" | "anthropic-messages";
export const PI_APIS: PiApi[] = ["openai-completions", "openai-responses", "anthropic-messages"];

/** The model object the product's agent uses; pi-ai's Anthropic client appends /v1 itself. */
export function piModel(api: PiApi, url: string): Model<Api> {
  return {
    id: "sim-1",
    name: "sim",
    api,
    provider: "sim",
    baseUrl: api === "anthropic-messages" ? url : `${url}/v1`,
    reasoning: false,
    input: ["text"],
    cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 8192,
  };
}

export async function runPi(model: Model<Api>, context: Context): Promise<{ events: AssistantMessageEvent[]; message: AssistantMessage }> {
  const stream = streamSimple(model, context, { apiKey: "x", maxRetries: 0 });
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, message: await stream.result() };
}

export function piUser(text: string): Context["messages"][number] {
  return { role: "user", content: text, timestamp: Date.now() };
}

/** Tool definitions for `names` in each protocol's shape: the simulator calls only tools a request offers. */
export function offered<Tool = Record<string, unknown>>(protocol: ProtocolName, names: string[]): Tool[] {
  const parameters = { type: "object", properties: {}, additionalProperties: true };
  return names.map((name) =>
    protocol === "openai-chat"
      ? { type: "function", function: { name, parameters } }
      : protocol === "openai-responses"
        ? { type: "function", name, parameters, strict: false }
        : { name, input_schema: parameters },
  ) as Tool[];
}
