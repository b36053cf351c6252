/**
 * Cursors are opaque to clients. A tail cursor is the seq as a decimal string (so
 * `after=<seq>` from an SSE id works too); a list cursor is base64url text that names
 * its sort, so a cursor from one sort is refused by another.
 */

const SEQ = /^(0|[1-9][0-9]{0,14})$/;

/** A tail or follow position, or null when the text is not one. */
export function parseSeqCursor(text: string): number | null {
  return SEQ.test(text) ? Number(text) : null;
}

export type ListCursor = { sort: "created"; n: number } | { sort: "recent"; updatedAt: string; n: number };

function b64url(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unb64url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
}

export function encodeListCursor(c: ListCursor): string {
  return b64url(c.sort === "created" ? `c:${c.n}` : `r:${c.n}:${c.updatedAt}`);
}

export function decodeListCursor(text: string): ListCursor | null {
  const raw = unb64url(text);
  if (!raw) return null;
  const created = /^c:([1-9][0-9]{0,14})$/.exec(raw);
  if (created) return { sort: "created", n: Number(created[1]) };
  const recent = /^r:([1-9][0-9]{0,14}):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/.exec(raw);
  if (recent) return { sort: "recent", n: Number(recent[1]), updatedAt: recent[2]! };
  return null;
}
