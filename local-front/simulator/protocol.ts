import type { IncomingHttpHeaders } from "node:http";
import type { Conversation } from "./conversation.js";
import type { ErrorResponse, SimError } from "./errors.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

export type ProtocolName = "openai-chat" | "openai-responses" | "anthropic-messages";

/** Everything that differs between the three wire protocols; the server does the rest. */
export interface Protocol {
  name: ProtocolName;
  hasApiKey(headers: IncomingHttpHeaders): boolean;
  parse(body: unknown): Conversation;
  error(e: SimError): ErrorResponse;
  frames(reply: Reply, conv: Conversation): Frame[];
  json(reply: Reply, conv: Conversation): unknown;
}

export function hasBearer(headers: IncomingHttpHeaders): boolean {
  return /^bearer\s+\S/i.test(headers.authorization ?? "");
}
