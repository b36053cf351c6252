import { CODES } from "../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";

const DRAIN_SCHEMA = `
  CREATE TABLE IF NOT EXISTS drain (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    boot TEXT NOT NULL,
    owner TEXT,
    reason TEXT,
    since INTEGER NOT NULL
  );
`;

export interface ArmedDrain {
  owner: string | null;
  reason: string | null;
  since: number;
}

/**
 * The host's drain and its claim rules. The row carries the boot that armed it and only
 * this boot's row counts: the spec keeps the drain in memory, so a restart disarms it,
 * yet an idle Host object may be evicted and rebuilt at any time, which must not.
 */
export class Drain {
  constructor(
    private readonly sql: SqlStorage,
    private readonly boot: string,
  ) {
    sql.exec(DRAIN_SCHEMA);
    sql.exec("DELETE FROM drain WHERE boot != ?", boot);
  }

  current(): ArmedDrain | null {
    return this.sql.exec<{ owner: string | null; reason: string | null; since: number }>("SELECT owner, reason, since FROM drain WHERE boot = ?", this.boot).toArray()[0] ?? null;
  }

  /**
   * Arms the drain, or adds a claim to an unclaimed one: an unclaimed drain is anyone's to
   * disarm, so claiming it takes nothing from anybody. A claim by someone else stands.
   */
  arm(owner: string | null, reason: string | null): Outcome<ArmedDrain> {
    const now = this.current();
    if (now?.owner && owner !== null && owner !== now.owner) return claimed(now.owner);
    if (now && (now.owner || owner === null)) return ok(now);
    this.sql.exec(
      "INSERT OR REPLACE INTO drain (one, boot, owner, reason, since) VALUES (1, ?, ?, ?, ?)",
      this.boot,
      owner,
      reason ?? now?.reason ?? null,
      now?.since ?? Date.now(),
    );
    return ok(this.current()!);
  }

  /** `DELETE /drain`: refused while an owner claims it. */
  disarm(): Outcome<null> {
    const now = this.current();
    if (now?.owner) return claimed(now.owner);
    this.sql.exec("DELETE FROM drain");
    return ok(null);
  }

  /** `DELETE /drain/claim`: only the owner that claimed the drain disarms it this way. */
  release(owner: string): Outcome<null> {
    const now = this.current();
    if (!now) return ok(null);
    if (!now.owner) return refuse(409, "the drain is not claimed: DELETE /drain disarms it", CODES.drainNotClaimed);
    if (now.owner !== owner) return claimed(now.owner);
    this.sql.exec("DELETE FROM drain");
    return ok(null);
  }
}

function claimed(owner: string): Outcome<never> {
  return refuse(409, `the drain is claimed by ${owner}: only DELETE /drain/claim?owner=${owner} disarms it`, CODES.drainClaimed, { owner });
}
