import type { IncomingHttpHeaders } from "node:http";
import type { Conversation } from "./conversation.js";
import type { ErrorResponse, SimError } from "./errors.js";
import type { Issued } from "./issued.js";
import type { Reply } from "./reply.js";
import type { Frame } from "./sse.js";

export type ProtocolName = "openai-chat" | "openai-responses" | "anthropic-messages";

/** Everything that differs between the three wire protocols; the server does the rest. */
export interface Protocol {
  name: ProtocolName;
  hasApiKey(headers: IncomingHttpHeaders): boolean;
  /** The request as a conversation; throws BadRequest for what the provider would refuse. */
  parse(body: unknown, headers: IncomingHttpHeaders, issued: Issued): Conversation;
  error(e: SimError): ErrorResponse;
  frames(reply: Reply, conv: Conversation, issued: Issued): Frame[];
  /** What the provider sends when it fails after the stream began, following `sent` (the frames so far). */
  failure(kind: "stream-error" | "stream-failed", conv: Conversation, sent: Frame[]): Frame[];
  json(reply: Reply, conv: Conversation, issued: Issued): unknown;
}

export function hasBearer(headers: IncomingHttpHeaders): boolean {
  return /^bearer\s+\S/i.test(headers.authorization ?? "");
}
