/**
 * The workspace's index of review rooms: a pull request's room by its key
 * (`<workspace>/<owner>/<name>#<pr>`), so a second arm of the same pull request adopts the
 * room the first one made. Decided in the Workspace's commit: two arms at once get one room.
 */
export const ROOMS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS rooms (key TEXT PRIMARY KEY, room_id TEXT NOT NULL, created_at TEXT NOT NULL);
`;

export class RoomIndex {
  constructor(private readonly sql: SqlStorage) {}

  find(key: string): string | null {
    return (this.sql.exec("SELECT room_id FROM rooms WHERE key = ?", key).toArray()[0]?.room_id as string | undefined) ?? null;
  }

  /** Inside a commit: the room for `key`, `candidate` if there was none. */
  claim(key: string, candidate: string): { id: string; created: boolean } {
    const found = this.find(key);
    if (found) return { id: found, created: false };
    this.sql.exec("INSERT INTO rooms (key, room_id, created_at) VALUES (?, ?, ?)", key, candidate, new Date().toISOString());
    return { id: candidate, created: true };
  }
}
