export const SETTINGS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** The workspace's settings by key: the head slot, the owner's policy, the completions thread, where reflection last read up to. Write only inside a commit. */
export class WorkspaceSettings {
  constructor(private readonly sql: SqlStorage) {}

  get(key: string): string | null {
    return this.sql.exec<{ value: string }>("SELECT value FROM settings WHERE key = ?", key).toArray()[0]?.value ?? null;
  }

  put(key: string, value: string): void {
    this.sql.exec("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", key, value);
  }

  remove(key: string): void {
    this.sql.exec("DELETE FROM settings WHERE key = ?", key);
  }
}
