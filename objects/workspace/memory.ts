import { CODES } from "../../src/api/errors.js";
import { MEMORY_MAX_CHARS, type EditMemory, type Memory, type MemoryKind, type MemoryPage, type MemoryQuery, type Recall, type Recalled, type Retain, type Retained } from "../../src/api/memory.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import { newId } from "../../src/shared/ids.js";
import { aboutNames, FIELD_WEIGHTS, fillBudget, helperPool, helpers, linkedTerms, memoryTerms, normalizedText, RELATED_WEIGHT, recallTokens, relatedTerms, scoreRecall } from "../../src/rules/memory-rank.js";
import { toMemory, type MemoryRow } from "./memory-schema.js";

/** What ranking needs of a memory the index found. */
type Hit = { n: number; importance: number; retired: number; bm: number };

const DEFAULT_IMPORTANCE = 0.5;
const DEFAULT_BUDGET_TOKENS = 1000;
/** The best matches of each pass over the index, and the best scored that the budget is filled from. */
const CANDIDATES = 200;
/** The rows read at once while filling the budget. */
const READ_AHEAD = 50;

function tagsOf(tags: string[] | undefined): string {
  return JSON.stringify([...new Set(tags ?? [])].sort());
}

/** Why this text cannot be stored, or null. */
export function sizeRefusal(text: string): Outcome<never> | null {
  if (text.length <= MEMORY_MAX_CHARS) return null;
  return refuse(413, `a memory holds at most ${MEMORY_MAX_CHARS} characters; this one has ${text.length}: retain its gist, or split it`, CODES.memoryTooLarge, { limit: MEMORY_MAX_CHARS });
}

/**
 * A workspace's memories: each method runs inside the Workspace's commit (the writes) or
 * reads what is on disk. Every rule that needs atomicity (one active memory per text, a
 * key or a correction retiring what it replaces) is decided in one write.
 */
export class Memories {
  constructor(private readonly sql: SqlStorage) {}

  private row(id: string): MemoryRow | null {
    return (this.sql.exec<MemoryRow>("SELECT * FROM memories WHERE id = ?", id).toArray()[0] as MemoryRow | undefined) ?? null;
  }

  get(id: string): Memory | null {
    const r = this.row(id);
    return r ? toMemory(r) : null;
  }

  /**
   * Inside a commit. The same text active already: that memory, and only what the retain
   * retires besides (a duplicate with a key the kept memory lacks gives it the key). The
   * text of a memory that was retired (corrected, or by a person) is refused: retaining
   * stale knowledge must not bring it back beside its correction. A retain that names a
   * key or what it supersedes is a correction itself, and may bring the old text back.
   */
  retain(body: Retain, now: string, kind: MemoryKind = body.kind ?? "fact", cites: string[] = []): Outcome<Retained> {
    if (body.supersedes !== undefined && !this.row(body.supersedes)) return refuse(404, `no memory ${body.supersedes} to supersede`, CODES.memoryNotFound);
    const norm = normalizedText(body.text);
    const same = this.sql.exec<MemoryRow>("SELECT * FROM memories WHERE norm = ? AND retired_at IS NULL", norm).toArray()[0] as MemoryRow | undefined;
    if (!same) {
      const old = this.sql.exec<MemoryRow>("SELECT * FROM memories WHERE norm = ? AND retired_at IS NOT NULL ORDER BY n DESC LIMIT 1", norm).toArray()[0] as MemoryRow | undefined;
      // A correction naming what it corrects (a key, or supersedes) may say the old value holds again: the old memory comes back, and what held the key retires.
      if (old && (body.key !== undefined || body.supersedes !== undefined)) {
        this.sql.exec("UPDATE memories SET retired_at = NULL, retired_by = NULL, retired_reason = NULL, key = ?, updated_at = ? WHERE id = ?", body.key ?? old.key, now, old.id);
        if (body.thread !== undefined) this.sql.exec("INSERT OR IGNORE INTO memory_sources (memory, thread, seq) VALUES (?, ?, ?)", old.id, body.thread, body.seq ?? null);
        const retired = [
          ...(body.supersedes !== undefined ? this.retireAll("id = ?", [body.supersedes], old.id, "superseded", now) : []),
          ...(body.key !== undefined ? this.retireAll("key = ?", [body.key], old.id, "key", now) : []),
        ];
        return ok({ id: old.id, memory: this.get(old.id)!, duplicate: true, retired });
      }
      if (old)
        return refuse(
          409,
          `memory ${old.id} had this text and was retired (${old.retired_reason}${old.retired_by ? ` by ${old.retired_by}` : ""}): edit it with retired false to bring it back`,
          CODES.memoryRetired,
          { id: old.id, retiredBy: old.retired_by },
        );
    }
    const id = same?.id ?? newId("mem_");
    if (!same)
      this.sql.exec(
        "INSERT INTO memories (id, kind, text, norm, key, tags, importance, thread, seq, created_at, updated_at, cites) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        id,
        kind,
        body.text,
        norm,
        body.key ?? null,
        tagsOf(body.tags),
        body.importance ?? DEFAULT_IMPORTANCE,
        body.thread ?? null,
        body.seq ?? null,
        now,
        now,
        JSON.stringify(cites),
      );
    else if (body.key !== undefined && same.key === null) this.sql.exec("UPDATE memories SET key = ?, updated_at = ? WHERE id = ?", body.key, now, id);
    if (body.thread !== undefined) this.sql.exec("INSERT OR IGNORE INTO memory_sources (memory, thread, seq) VALUES (?, ?, ?)", id, body.thread, body.seq ?? null);
    const retired: string[] = [];
    if (body.supersedes !== undefined) retired.push(...this.retireAll("id = ?", [body.supersedes], id, "superseded", now));
    // A duplicate kept under another key is about that key: it retires nothing by this one.
    const keyHolder = same && same.key !== null && body.key !== undefined && same.key !== body.key ? null : body.key;
    if (keyHolder !== undefined && keyHolder !== null) retired.push(...this.retireAll("key = ?", [keyHolder], id, "key", now));
    return ok({ id, memory: this.get(id)!, duplicate: same !== undefined, retired });
  }

  /** Inside a commit: retires the active memories `where` names, but `by` itself, for `by`. */
  private retireAll(where: string, args: string[], by: string, reason: "superseded" | "key", now: string): string[] {
    return this.sql
      .exec<{ id: string }>(`UPDATE memories SET retired_at = ?, retired_by = ?, retired_reason = ?, updated_at = ? WHERE ${where} AND retired_at IS NULL AND id != ? RETURNING id`, now, by, reason, now, ...args, by)
      .toArray()
      .map((r) => r.id);
  }

  /**
   * Inside a commit: a person's correction in place. Every check comes before the first
   * write, so a refused edit changes nothing: an active memory's text must be no other
   * active memory's, and its key no other's either (a key is one fact).
   */
  edit(id: string, e: EditMemory, now: string): Outcome<Memory> {
    const r = this.row(id);
    if (!r) return refuse(404, `no memory ${id}`, CODES.memoryNotFound);
    const norm = e.text === undefined ? r.norm : normalizedText(e.text);
    const key = e.key === undefined ? r.key : e.key;
    const active = e.retired === undefined ? r.retired_at === null : !e.retired;
    if (active) {
      const clash = this.sql.exec<{ id: string }>("SELECT id FROM memories WHERE norm = ? AND retired_at IS NULL AND id != ?", norm, id).toArray()[0];
      if (clash) return refuse(409, `memory ${clash.id} holds this text already: forget one of them`, CODES.memoryDuplicate, { id: clash.id });
      const keyed = key === null ? undefined : this.sql.exec<{ id: string }>("SELECT id FROM memories WHERE key = ? AND retired_at IS NULL AND id != ?", key, id).toArray()[0];
      if (keyed) return refuse(409, `memory ${keyed.id} holds key ${key}: retire it first, or give this one another key`, CODES.memoryDuplicate, { id: keyed.id });
    }
    // One statement: the unique index on an active memory's text is checked on the row as it ends, not half-way.
    const retired = active ? { at: null, by: null, reason: null } : r.retired_at !== null ? { at: r.retired_at, by: r.retired_by, reason: r.retired_reason } : { at: now, by: null, reason: "person" };
    this.sql.exec(
      "UPDATE memories SET text = ?, norm = ?, key = ?, tags = ?, importance = ?, updated_at = ?, retired_at = ?, retired_by = ?, retired_reason = ? WHERE id = ?",
      e.text ?? r.text,
      norm,
      key,
      e.tags === undefined ? r.tags : tagsOf(e.tags),
      e.importance ?? r.importance,
      now,
      retired.at,
      retired.by,
      retired.reason,
      id,
    );
    return ok(this.get(id)!);
  }

  /** Inside a commit: gone for good, and from the index. */
  forget(id: string): Outcome<{ id: string; forgotten: true }> {
    const done = this.sql.exec("DELETE FROM memories WHERE id = ? RETURNING id", id).toArray();
    if (done.length === 0) return refuse(404, `no memory ${id}`, CODES.memoryNotFound);
    this.sql.exec("DELETE FROM memory_sources WHERE memory = ?", id);
    return ok({ id, forgotten: true });
  }

  /**
   * The best matches of the index for any of `phrases` (each a list of words that stand
   * together), by BM25 over the weighted fields: what ranking needs of each, the rows
   * themselves read later for the few that need them.
   */
  private search(phrases: string[][], q: Recall): Hit[] {
    if (phrases.length === 0) return [];
    const tags = [...new Set(q.tags ?? [])];
    return this.sql
      .exec<Hit>(
        `SELECT m.n AS n, m.importance AS importance, m.retired_at IS NOT NULL AS retired, bm25(memory_index, ${FIELD_WEIGHTS.text}, ${FIELD_WEIGHTS.key}, ${FIELD_WEIGHTS.tags}) AS bm
         FROM memory_index JOIN memories m ON m.n = memory_index.rowid
         WHERE memory_index MATCH ? ${q.includeRetired ? "" : "AND m.retired_at IS NULL"}
         ${tags.map(() => "AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)").join(" ")}
         ORDER BY bm LIMIT ${CANDIDATES}`,
        phrases.map((p) => `"${p.join(" ")}"`).join(" OR "),
        ...tags,
      )
      .toArray();
  }

  /** The rows of memories `ns` not read yet, into `rows`. */
  private read(ns: number[], rows: Map<number, MemoryRow>): void {
    const missing = ns.filter((n) => !rows.has(n));
    if (missing.length === 0) return;
    for (const r of this.sql.exec<MemoryRow>("SELECT m.* FROM json_each(?) AS j JOIN memories m ON m.n = j.value", JSON.stringify(missing)).toArray()) rows.set(r.n, r);
  }

  /**
   * The index asked term by term (the query's words, then their related words), so the
   * rule sees what each memory matches; then for the names the best matches of each term
   * are about, which finds the memories that only a helper matches (src/rules/memory-rank.ts).
   */
  recall(q: Recall): Recalled {
    const budgetTokens = q.budgetTokens ?? DEFAULT_BUDGET_TOKENS;
    const words = memoryTerms(q.query);
    if (words.length === 0) return { memories: [], budgetTokens, usedTokens: 0 };
    const newest = (this.sql.exec<{ n: number | null }>("SELECT MAX(n) AS n FROM memories").one().n as number | null) ?? 1;
    const terms = [...words.map((w) => ({ phrase: [w], weight: 1 })), ...relatedTerms(words).map((w) => ({ phrase: w.split(" "), weight: RELATED_WEIGHT }))];
    const found = new Map<number, { n: number; matches: number[]; importance: number; retired: boolean; helper?: readonly number[] }>();
    const take = (hits: Hit[]) => {
      for (const h of hits) if (!found.has(h.n)) found.set(h.n, { n: h.n, matches: new Array<number>(terms.length).fill(0), importance: h.importance, retired: Boolean(h.retired) });
    };
    terms.forEach((t, i) => {
      const hits = this.search([t.phrase], q);
      take(hits);
      for (const h of hits) found.get(h.n)!.matches[i] = -h.bm * t.weight;
    });
    const rows = new Map<number, MemoryRow>();
    const named = (n: number) => {
      const r = rows.get(n)!;
      return { key: r.key, tags: JSON.parse(r.tags) as string[], text: r.text };
    };
    const pool = helperPool([...found.values()]);
    this.read(pool.map((c) => c.n), rows);
    const linked = this.search(linkedTerms(pool.map((c) => named(c.n))), q);
    if (linked.length > 0) {
      take(linked);
      this.read(linked.map((h) => h.n), rows);
      // Only a memory the index found for a helper's name can share one with it.
      const withNames = (n: number) => ({ n, matches: found.get(n)!.matches, names: aboutNames(named(n)).map((p) => p.join(" ")) });
      for (const [n, helper] of helpers(pool.map((c) => withNames(c.n)), linked.map((h) => withNames(h.n)))) found.get(n)!.helper = helper;
    }
    const scored = scoreRecall([...found.values()], newest).slice(0, CANDIDATES);
    // The rows a budget is filled from, a few at a time: most recalls fill it from the first.
    const ranked = fillBudget(scored, budgetTokens, (c, i) => {
      if (!rows.has(c.n)) this.read(scored.slice(i, i + READ_AHEAD).map((x) => x.n), rows);
      return recallTokens(rows.get(c.n)!.text);
    });
    const memories = ranked.map((x) => ({ ...toMemory(rows.get(x.n)!), score: x.score, tokens: x.tokens }));
    return { memories, budgetTokens, usedTokens: memories.reduce((sum, m) => sum + m.tokens, 0) };
  }

  page(q: MemoryQuery): MemoryPage {
    const limit = q.limit ?? 50;
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.kind) (where.push("kind = ?"), args.push(q.kind));
    if (q.thread) (where.push("EXISTS (SELECT 1 FROM memory_sources WHERE memory = memories.id AND thread = ?)"), args.push(q.thread));
    if (q.tag) (where.push("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)"), args.push(q.tag));
    if (q.retired === "only") where.push("retired_at IS NOT NULL");
    else if (q.retired !== "include") where.push("retired_at IS NULL");

    if (q.before) (where.push("n < ?"), args.push(q.before));
    const rows = this.sql
      .exec<MemoryRow>(`SELECT * FROM memories ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY n DESC LIMIT ?`, ...args, limit + 1)
      .toArray();
    const more = rows.length > limit;
    const shown = rows.slice(0, limit);
    return { memories: shown.map(toMemory), nextBefore: more ? shown.at(-1)!.n : null };
  }

  /** The newest active memories that are not reflections, oldest first: what the curator reads. */
  recent(limit: number): Memory[] {
    return this.sql
      .exec<MemoryRow>("SELECT * FROM memories WHERE retired_at IS NULL AND kind != 'reflection' ORDER BY n DESC LIMIT ?", limit)
      .toArray()
      .reverse()
      .map(toMemory);
  }

  /** Where a memory stands in the order memories were stored. */
  position(id: string): number {
    return this.row(id)?.n ?? 0;
  }

  /** Memories stored (reflections aside) after position `n`: the automatic reflection counts them. */
  since(n: number): number {
    return this.sql.exec<{ c: number }>("SELECT COUNT(*) AS c FROM memories WHERE kind != 'reflection' AND n > ?", n).one().c as number;
  }
}
