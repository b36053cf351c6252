import { answerProblem } from "./answer-check.js";
export { waitFor } from "./wait-for.js";

/**
 * A raw JSON call: status and parsed body, whatever the status (tests look at refusals too).
 * An answer of a front of this checkout that the OpenAPI document does not allow fails the call.
 */
export async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  const problem = answerProblem(base, method, path, res.status, res.headers.get("content-type") ?? "", parsed);
  if (problem) throw new Error(`the answer breaks the contract: ${problem}`);
  return { status: res.status, body: parsed, headers: res.headers };
}

export interface LoggedEvent {
  seq: number;
  ts: string;
  kind: string;
  body: any;
  blob?: { sha256: string };
}

/** A thread's whole log (up to 1,000 events), as `tail` pages it. */
export async function events(base: string, id: string): Promise<LoggedEvent[]> {
  return (await call(base, "GET", `/threads/${id}/tail?limit=1000`)).body.events;
}

/** Each fault the simulator can provoke, and the failure class every engine must record for it. */
export const FAULT_CLASSES: [fail: string, cls: string][] = [
  ["quota", "quota"],
  ["auth", "auth"],
  ["model-not-found", "model-not-found"],
  ["unsupported-model", "unsupported-model"],
  ["rate-limit", "quota"],
  ["server", "unknown"],
  ["disconnect", "session"],
];

/** A `@sim` directive line followed by the text the simulator echoes. */
export function sim(directive: Record<string, unknown>, text = "go"): string {
  return `@sim ${JSON.stringify(directive)}\n${text}`;
}

