import type { Memory, MemoryKind } from "../../src/api/memory.js";

/**
 * The memories table and its full-text index (FTS5, kept by triggers so no write can
 * forget it), over a memory's text, key and tags: each a column, so recall weighs them
 * apart (FIELD_WEIGHTS). The index replaces `memories_fts`, the text's alone: a workspace
 * that has it rebuilds the new one from its memories once, then drops it. One active memory per normalized text (a unique index backs the checks
 * that answer it): a second retain of the same text finds the first. `n` orders
 * memories by when they were stored, and pages by it; it is never reused, so a memory
 * stored after one was forgotten is still the newest. `memory_sources` keeps every
 * thread that retained a memory, a duplicate's thread too.
 */
export const MEMORY_SCHEMA = `
  CREATE TABLE IF NOT EXISTS memories (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    key TEXT,
    tags TEXT NOT NULL,
    importance REAL NOT NULL,
    thread TEXT,
    seq INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    retired_at TEXT,
    retired_by TEXT,
    retired_reason TEXT,
    cites TEXT NOT NULL DEFAULT '[]'
  );
  CREATE UNIQUE INDEX IF NOT EXISTS memories_norm ON memories(norm) WHERE retired_at IS NULL;
  CREATE INDEX IF NOT EXISTS memories_norm_all ON memories(norm);
  CREATE TABLE IF NOT EXISTS memory_sources (memory TEXT NOT NULL, thread TEXT NOT NULL, seq INTEGER, PRIMARY KEY (memory, thread));
  CREATE INDEX IF NOT EXISTS memory_sources_thread ON memory_sources(thread);
  CREATE INDEX IF NOT EXISTS memories_key ON memories(key) WHERE retired_at IS NULL AND key IS NOT NULL;
  CREATE INDEX IF NOT EXISTS memories_thread ON memories(thread, n);
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_index USING fts5(text, key, tags, content='memories', content_rowid='n', tokenize='porter unicode61');
  INSERT INTO memory_index(memory_index) SELECT 'rebuild' WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'memories_fts');
  DROP TRIGGER IF EXISTS memories_ai;
  DROP TRIGGER IF EXISTS memories_ad;
  DROP TRIGGER IF EXISTS memories_au;
  DROP TABLE IF EXISTS memories_fts;
  CREATE TRIGGER IF NOT EXISTS memory_index_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_index(rowid, text, key, tags) VALUES (new.n, new.text, new.key, new.tags);
  END;
  CREATE TRIGGER IF NOT EXISTS memory_index_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memory_index(memory_index, rowid, text, key, tags) VALUES ('delete', old.n, old.text, old.key, old.tags);
  END;
  CREATE TRIGGER IF NOT EXISTS memory_index_au AFTER UPDATE OF text, key, tags ON memories BEGIN
    INSERT INTO memory_index(memory_index, rowid, text, key, tags) VALUES ('delete', old.n, old.text, old.key, old.tags);
    INSERT INTO memory_index(rowid, text, key, tags) VALUES (new.n, new.text, new.key, new.tags);
  END;
`;

/** A row of the memories table as SQLite answers it. */
export type MemoryRow = {
  n: number;
  id: string;
  kind: string;
  text: string;
  norm: string;
  key: string | null;
  tags: string;
  importance: number;
  thread: string | null;
  seq: number | null;
  created_at: string;
  updated_at: string;
  retired_at: string | null;
  retired_by: string | null;
  retired_reason: string | null;
  cites: string;
};

export function toMemory(r: MemoryRow): Memory {
  return {
    id: r.id,
    kind: r.kind as MemoryKind,
    text: r.text,
    key: r.key,
    tags: JSON.parse(r.tags) as string[],
    importance: r.importance,
    thread: r.thread,
    seq: r.seq,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    retired: r.retired_at ? { at: r.retired_at, by: r.retired_by, reason: r.retired_reason as "superseded" | "key" | "person" } : null,
    cites: JSON.parse(r.cites) as string[],
  };
}
