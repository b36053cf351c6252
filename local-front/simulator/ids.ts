import { randomBytes } from "node:crypto";

/** Provider-looking ids (`chatcmpl-…`, `toolu_…`) so clients that sniff prefixes accept them. */
export function simId(prefix: string): string {
  return prefix + randomBytes(12).toString("hex");
}
