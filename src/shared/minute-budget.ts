const MINUTE_MS = 60_000;

/**
 * A per-minute budget over a sliding window. `take` records one use at `now` and answers
 * null, or, when the budget is spent, the seconds until the oldest use ages out (and
 * records nothing).
 */
export class MinuteBudget {
  private times: number[] = [];

  constructor(private readonly perMinute: number) {}

  take(now = Date.now()): number | null {
    this.times = this.times.filter((t) => t > now - MINUTE_MS);
    if (this.times.length >= this.perMinute) return Math.max(1, Math.ceil((this.times[0]! + MINUTE_MS - now) / 1000));
    this.times.push(now);
    return null;
  }
}
