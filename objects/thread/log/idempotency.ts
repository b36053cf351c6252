import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { sha256Hex } from "./blob-store.js";

/** What a request is checked against when its Idempotency-Key comes again: the SHA-256 of its JSON. */
export function digestOf(request: unknown): Promise<string> {
  return sha256Hex(new TextEncoder().encode(JSON.stringify(request)));
}

/**
 * The Thread's Idempotency-Keys (its `idempotency` table): the event each key's request
 * wrote, so the same request again answers what it answered, and another request under
 * the same key is refused. Read and written inside the commit that writes the event.
 */
export class IdempotencyKeys {
  constructor(private readonly sql: SqlStorage) {}

  /** The event the key's request wrote; a conflict when this request is another; null for a new key. */
  seen(key: string, digest: string, what: string): Outcome<{ seq: number; ts: string }> | null {
    const row = this.sql.exec<{ digest: string; seq: number; ts: string }>("SELECT digest, seq, ts FROM idempotency WHERE key = ?", key).toArray()[0];
    if (!row) return null;
    if (row.digest !== digest) return refuse(409, `this Idempotency-Key was used for a different ${what}`, CODES.idempotencyConflict, { seq: row.seq });
    return ok({ seq: row.seq, ts: row.ts });
  }

  remember(key: string, digest: string, seq: number, ts: string): void {
    this.sql.exec("INSERT INTO idempotency (key, digest, seq, ts) VALUES (?, ?, ?, ?)", key, digest, seq, ts);
  }
}
