import type { IncomingMessage, ServerResponse } from "node:http";
import type { Outcome } from "../../src/api/outcome.js";

/** Helpers for the bindings the front serves to the worker (engines, accounts). */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text ? (JSON.parse(text) as unknown) : {};
}

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/** A binding's answer in the worker's shapes: the value as JSON, or the refusal with its status and headers. */
export function replyOutcome(res: ServerResponse, outcome: Outcome<unknown>): void {
  if (outcome.ok) reply(res, 200, outcome.value);
  else reply(res, outcome.status, outcome.body, outcome.headers);
}
