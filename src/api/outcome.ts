import type { ErrorBody } from "./errors.js";

/**
 * A refusal as data: what an object's RPC method answers, what a pure rule returns, and
 * what the router answers as is. Thrown errors lose their fields across RPC; a returned
 * refusal keeps its status, code, details and headers (`Retry-After`).
 */
export interface Refusal {
  ok: false;
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

/** What an object's RPC method answers: a value, or a refusal. */
export type Outcome<T> = { ok: true; value: T } | Refusal;

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });

export function refuse(status: number, error: string, code: string, details?: Record<string, unknown>, headers?: Record<string, string>): Refusal {
  return { ok: false, status, body: { error, ...(code ? { code } : {}), ...details }, ...(headers ? { headers } : {}) };
}
