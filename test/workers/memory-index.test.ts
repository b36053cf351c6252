import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Memories } from "../../objects/workspace/memory.js";
import { MEMORY_SCHEMA } from "../../objects/workspace/memory-schema.js";
import type { Workspace } from "../../objects/workspace.js";
import { workspaceOf } from "../../src/platform/stubs.js";

/**
 * The Workspace's memory index over text, key and tags (objects/workspace/memory.ts), in
 * a Workspace object's own SQLite.
 */
const NOW = "2026-11-27T00:00:00.000Z";
const recalled = (m: Memories, query: string) => m.recall({ query }).memories.map((x) => x.key);

/** The index as it was before it took the key and tags: the text's alone, kept by its triggers. */
const TEXT_ONLY_INDEX = `
  CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='n', tokenize='porter unicode61');
  CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text) VALUES (new.n, new.text);
  END;
  CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.n, old.text);
  END;
`;

describe("the memory index (objects/workspace/memory.ts)", () => {
  it("finds a memory by its key and its tags, and follows an edit of either and a forget", async () => {
    await runInDurableObject(workspaceOf(env, "memory-index-a"), async (_: Workspace, state) => {
      const m = new Memories(state.storage.sql);
      const kept = m.retain({ text: "Listens on 3012 when started with make dev.", key: "checkout-web-port", tags: ["storefront"] }, NOW);
      if (!kept.ok) throw new Error("not kept");
      expect(recalled(m, "checkout web")).toEqual(["checkout-web-port"]);
      expect(recalled(m, "storefront")).toEqual(["checkout-web-port"]);
      m.edit(kept.value.id, { key: "cart-web-port", tags: ["shop"] }, NOW);
      expect(recalled(m, "checkout storefront")).toEqual([]);
      expect(recalled(m, "cart shop")).toEqual(["cart-web-port"]);
      m.forget(kept.value.id);
      expect(recalled(m, "cart shop listens")).toEqual([]);
    });
  });

  it("builds the new index from a workspace's memories once, in place of the text-only one", async () => {
    await runInDurableObject(workspaceOf(env, "memory-index-b"), async (_: Workspace, state) => {
      const sql = state.storage.sql;
      // A workspace of an earlier version: its memories, indexed by their text alone.
      sql.exec("DROP TRIGGER memory_index_ai; DROP TRIGGER memory_index_ad; DROP TRIGGER memory_index_au; DROP TABLE memory_index;" + TEXT_ONLY_INDEX);
      sql.exec("INSERT INTO memories (id, kind, text, norm, key, tags, importance, created_at, updated_at) VALUES ('mem_1', 'fact', 'Listens on 3012.', 'listens on 3012.', 'checkout-web-port', '[\"storefront\"]', 0.5, ?, ?)", NOW, NOW);
      // What the object runs when it starts.
      sql.exec(MEMORY_SCHEMA);
      const names = sql.exec<{ name: string }>("SELECT name FROM sqlite_master").toArray().map((r) => r.name);
      expect(names).not.toContain("memories_fts");
      expect(names).not.toContain("memories_ai");
      const m = new Memories(sql);
      expect(recalled(m, "checkout storefront")).toEqual(["checkout-web-port"]);
      // A later start finds the index built, and leaves it as it is.
      sql.exec(MEMORY_SCHEMA);
      expect(recalled(m, "listens")).toEqual(["checkout-web-port"]);
      expect(sql.exec<{ c: number }>("SELECT COUNT(*) AS c FROM memory_index WHERE memory_index MATCH 'listens'").one().c).toBe(1);
    });
  });
});
