import type { ErrorBody } from "../../src/api/errors.js";

/**
 * What an object's RPC method answers: a value, or a refusal the router turns into
 * an HTTP error as is. Thrown errors lose their fields across RPC; a returned refusal
 * keeps its status, code and details.
 */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: number; body: ErrorBody };

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });

export function refuse(status: number, error: string, code?: string, details?: Record<string, unknown>): Outcome<never> {
  return { ok: false, status, body: { error, ...(code ? { code } : {}), ...details } };
}
