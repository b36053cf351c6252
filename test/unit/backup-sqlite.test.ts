import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { copyStore, hasTable, replaceRow, select, whereEquals } from "../../local-front/backup/sqlite.js";
import { removeDir } from "../support/front.js";

const dir = mkdtempSync(join(tmpdir(), "agent-runtime-backup-sqlite-"));
afterAll(() => removeDir(dir));

/** A WAL store like workerd's, with rows whose text needs quoting. */
function store(name: string): string {
  const path = join(dir, name);
  execFileSync("sqlite3", [path], {
    input: `PRAGMA journal_mode = wal;
CREATE TABLE _mf_objects (key TEXT PRIMARY KEY, blob_id TEXT, size INTEGER, checksums TEXT);
INSERT INTO _mf_objects VALUES ('a', 'b1', 5, '{}'), ('it''s "quoted"', NULL, 7, '{"sha256":"x"}');`,
  });
  return path;
}

describe("the backup's SQLite, through Debian's sqlite3", () => {
  it("copies a live WAL store into one self-contained WAL file that passes its check", () => {
    const src = store("live.sqlite");
    const dst = join(dir, "copy.sqlite");
    copyStore(src, dst);
    expect(existsSync(`${dst}-wal`)).toBe(false);
    // Bytes 18 and 19 of the header: 2 and 2 say WAL, as the store it copies.
    expect([...readFileSync(dst).subarray(18, 20)]).toEqual([2, 2]);
    expect(select(dst, "SELECT key, blob_id, size FROM _mf_objects ORDER BY key", { copy: true })).toEqual([
      { key: "a", blob_id: "b1", size: 5 },
      { key: `it's "quoted"`, blob_id: null, size: 7 },
    ]);
    // Read as a copy, it stays one file; read-only, a WAL store gets its -wal and -shm.
    expect(existsSync(`${dst}-wal`)).toBe(false);
    expect(hasTable(dst, "_mf_objects")).toBe(true);
    expect(existsSync(`${dst}-wal`)).toBe(true);
  });

  it("refuses to copy over a file, and never creates a store it only reads", () => {
    const src = store("twice.sqlite");
    copyStore(src, join(dir, "twice-copy.sqlite"));
    expect(() => copyStore(src, join(dir, "twice-copy.sqlite"))).toThrow(/already exists/);
    const gone = join(dir, "gone.sqlite");
    expect(() => copyStore(gone, join(dir, "gone-copy.sqlite"))).toThrow(/unable to open/);
    expect(() => select(gone, "SELECT 1")).toThrow(/unable to open/);
    expect(existsSync(gone)).toBe(false);
  });

  it("reads tables and rows, and writes a row back with its text quoted", () => {
    const path = store("rows.sqlite");
    expect(hasTable(path, "_mf_objects")).toBe(true);
    expect(hasTable(path, "_mf_multipart_parts")).toBe(false);
    expect(select(path, "SELECT * FROM _mf_objects WHERE 0")).toEqual([]);
    replaceRow(path, "_mf_objects", { key: `it's "quoted"`, blob_id: "b'2", size: 9, checksums: "{}" });
    expect(select(path, `SELECT blob_id, size FROM _mf_objects WHERE ${whereEquals("key", `it's "quoted"`)}`)).toEqual([{ blob_id: "b'2", size: 9 }]);
    expect(() => replaceRow(path, "_mf_objects", { key: "k", size: 1.5 })).toThrow(/cannot write back/);
  });
});
