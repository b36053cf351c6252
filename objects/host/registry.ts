export const REGISTRY_SCHEMA = `
  CREATE TABLE IF NOT EXISTS registry (kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (kind, key));
`;

/**
 * Small host-wide records an operator keeps (external peers, previews), by kind and key,
 * in the Host object's storage: they are configuration, so they outlive restarts.
 */
export class Registry {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(REGISTRY_SCHEMA);
  }

  /** Adds a record; false when the key is taken (nothing changes then). */
  add(kind: string, key: string, value: unknown): boolean {
    const written = this.sql.exec("INSERT OR IGNORE INTO registry (kind, key, value) VALUES (?, ?, ?) RETURNING key", kind, key, JSON.stringify(value)).toArray();
    return written.length > 0;
  }

  remove(kind: string, key: string): boolean {
    return this.sql.exec("DELETE FROM registry WHERE kind = ? AND key = ? RETURNING key", kind, key).toArray().length > 0;
  }

  /** The records of a kind as JSON text (an array, in the order they were added). */
  list(kind: string): string {
    const rows = this.sql.exec<{ value: string }>("SELECT value FROM registry WHERE kind = ? ORDER BY rowid", kind).toArray();
    return `[${rows.map((r) => r.value).join(",")}]`;
  }

  get(kind: string, key: string): string | null {
    return this.sql.exec<{ value: string }>("SELECT value FROM registry WHERE kind = ? AND key = ?", kind, key).toArray()[0]?.value ?? null;
  }
}
