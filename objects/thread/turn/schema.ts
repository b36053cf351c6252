/**
 * The turn tables of one Thread object: the inbox of messages waiting for a turn, the
 * transcript the engine is given and the reductions applied to it (a copy of the
 * `window` events), and the approvals and questions a turn waits on.
 * Every write here runs inside the object's commit queue, next to the event it belongs to.
 */
export const TURN_SCHEMA = `
  CREATE TABLE IF NOT EXISTS inbox (
    seq    INTEGER PRIMARY KEY,
    text   TEXT NOT NULL,
    sender TEXT,
    seat   TEXT
  );
  CREATE TABLE IF NOT EXISTS transcript (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    seq   INTEGER NOT NULL,
    entry TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS transcript_seq ON transcript (seq);
  CREATE TABLE IF NOT EXISTS windows (
    seq        INTEGER PRIMARY KEY,
    body       TEXT NOT NULL,
    up_to_row  INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS attachments (
    seq        INTEGER NOT NULL,
    idx        INTEGER NOT NULL,
    name       TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    PRIMARY KEY (seq, idx)
  );
  CREATE TABLE IF NOT EXISTS steering (
    seq          INTEGER PRIMARY KEY,
    turn_id      TEXT NOT NULL,
    text         TEXT NOT NULL,
    sender       TEXT,
    seat         TEXT,
    state        TEXT NOT NULL,
    reason       TEXT,
    resolved_seq INTEGER,
    joined       INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS seat_bases (
    seat    TEXT PRIMARY KEY,
    row     INTEGER NOT NULL,
    summary TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS handoffs (
    from_seq     INTEGER PRIMARY KEY,
    from_seat    TEXT NOT NULL,
    to_seat      TEXT NOT NULL,
    note         TEXT,
    context      TEXT NOT NULL,
    offered_by   TEXT NOT NULL,
    state        TEXT NOT NULL,
    answered_seq INTEGER
  );
  CREATE TABLE IF NOT EXISTS waits (
    id       TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    turn_id  TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    detail   TEXT NOT NULL,
    status   TEXT NOT NULL,
    outcome  TEXT,
    resolved_seq INTEGER
  );
`;
