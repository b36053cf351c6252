import type { HostReport, HostSample, KeeperThresholds, SpawnPause } from "../../src/api/operator.js";

export const KEEPER_SCHEMA = `
  CREATE TABLE IF NOT EXISTS keeper (one INTEGER PRIMARY KEY CHECK (one = 1), state TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS host_samples (at INTEGER PRIMARY KEY, sample TEXT NOT NULL);
`;

/** A day of samples at the front's default pace (one every 30 s). */
const SAMPLES_KEPT_MS = 24 * 60 * 60 * 1000;

interface KeeperState {
  paused: boolean;
  since: string | null;
  reason: string | null;
  /** An operator cleared the pause; it stays off until free space has recovered once. */
  cleared: { at: string; reason: string } | null;
  /** Free bytes at the last clear. */
  clearedAtFree: number;
  last: HostReport | null;
  thresholds: KeeperThresholds | null;
}

const INITIAL: KeeperState = { paused: false, since: null, reason: null, cleared: null, clearedAtFree: 0, last: null, thresholds: null };

/**
 * The disk keeper's decision, inside the Host object: spawns pause when free space on
 * the data volume drops under the pause threshold and resume once it rises over the
 * resume threshold (the gap keeps it from flapping). The front measures; this decides.
 * An operator's clear holds until the volume recovers, so the next measurement does not
 * undo it at once.
 */
export class Keeper {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(KEEPER_SCHEMA);
  }

  /** A measurement from the front; `running` is how many turns run now (kept with the sample). */
  report(report: HostReport, thresholds: KeeperThresholds, running: number): SpawnPause {
    const s = this.state();
    s.last = report;
    s.thresholds = thresholds;
    const free = report.disk.freeBytes;
    if (free > thresholds.resumeAboveBytes) {
      s.cleared = null;
      if (s.paused) Object.assign(s, { paused: false, since: null, reason: null });
    } else if (free < thresholds.pauseBelowBytes && !s.paused && (!s.cleared || free < s.clearedAtFree / 2)) {
      // A clear holds until the volume recovers, unless it keeps filling: at half the space
      // there was when the operator cleared, spawns pause again.
      s.cleared = null;
      Object.assign(s, {
        paused: true,
        since: report.at,
        reason: `${gb(free)} free on the data volume, under the ${gb(thresholds.pauseBelowBytes)} floor; spawns resume over ${gb(thresholds.resumeAboveBytes)}`,
      });
    }
    this.save(s);
    const at = Date.parse(report.at);
    const sample: HostSample = { ...report, running };
    this.sql.exec("INSERT OR REPLACE INTO host_samples (at, sample) VALUES (?, ?)", at, JSON.stringify(sample));
    this.sql.exec("DELETE FROM host_samples WHERE at < ?", at - SAMPLES_KEPT_MS);
    return this.view();
  }

  clear(reason: string): SpawnPause {
    const s = this.state();
    if (s.paused)
      Object.assign(s, { paused: false, since: null, reason: null, cleared: { at: new Date().toISOString(), reason }, clearedAtFree: s.last?.disk.freeBytes ?? 0 });
    this.save(s);
    return this.view();
  }

  view(): SpawnPause {
    const s = this.state();
    return {
      paused: s.paused,
      since: s.since,
      reason: s.reason,
      cleared: s.cleared,
      freeBytes: s.last?.disk.freeBytes ?? null,
      totalBytes: s.last?.disk.totalBytes ?? null,
      checkedAt: s.last?.at ?? null,
      pauseBelowBytes: s.thresholds?.pauseBelowBytes ?? null,
      resumeAboveBytes: s.thresholds?.resumeAboveBytes ?? null,
      retryAfterS: s.thresholds?.retryAfterS ?? null,
    };
  }

  /** The latest measurement of the machine, if the front has sent one. */
  last(): HostReport | null {
    return this.state().last;
  }

  /** Measurements since `since` (epoch ms), oldest first. */
  samples(since: number): HostSample[] {
    return this.sql
      .exec<{ sample: string }>("SELECT sample FROM host_samples WHERE at >= ? ORDER BY at", since)
      .toArray()
      .map((r) => JSON.parse(r.sample) as HostSample);
  }

  private state(): KeeperState {
    const row = this.sql.exec<{ state: string }>("SELECT state FROM keeper WHERE one = 1").toArray()[0];
    return row ? (JSON.parse(row.state) as KeeperState) : { ...INITIAL };
  }

  private save(s: KeeperState): void {
    this.sql.exec("INSERT OR REPLACE INTO keeper (one, state) VALUES (1, ?)", JSON.stringify(s));
  }
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
