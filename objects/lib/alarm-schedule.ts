/** One part of an object that needs its alarm: a wait's expiry, a retry, a keep-alive. */
export interface AlarmPart {
  /** Names the part in the log when its run fails. */
  readonly name: string;
  /**
   * When the part next has something to do (epoch ms), or null. Computed from durable
   * state wherever the thing itself is durable (a wait's row and the time it opened), so
   * a new instance, after an eviction or a restart, finds the same time.
   */
  nextDueAt(): number | null;
  /** Does what has come due by `now`; what is not due yet is left alone. */
  runDue(now: number): Promise<void>;
  /**
   * Runs on every alarm, due or not: a safety net whose state a new instance cannot know
   * (whether its last push landed), which the alarm an earlier instance set is there to cover.
   */
  readonly everyAlarm?: boolean;
}

/** What the schedule needs of the object's storage (a `DurableObjectStorage`). */
export interface AlarmStorage {
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** How long a part whose run left it due (a failure) waits before the alarm tries it again. */
const RETRY_MS = 5000;

/**
 * The one alarm of a Durable Object, shared by every part that needs one. An object has a
 * single alarm, and "the earliest asker wins, whatever runs then sets the next" loses a
 * later asker whenever what runs does not know of it: a wait's expiry behind the
 * catalog's safety net then never came. So no part sets the alarm itself: each reports
 * its next due time, `update` moves the alarm earlier when one is sooner (after a change,
 * the hot path: one read of the alarm per instance, a write only when it moves), and
 * `run`, the object's `alarm()`, runs every part that is due and sets the alarm to the
 * earliest time any part still has, so nothing is dropped.
 */
export class AlarmSchedule {
  private readonly parts: AlarmPart[] = [];
  /** The alarm as this instance last saw or set it; undefined until read. */
  private set: number | null | undefined = undefined;
  /** A retry of an update the storage refused, while one is pending. */
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly storage: AlarmStorage,
    private readonly retryMs = RETRY_MS,
  ) {}

  add(part: AlarmPart): void {
    this.parts.push(part);
  }

  /** The earliest due time of any part. */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const p of this.parts) {
      const due = this.dueOf(p);
      if (due !== null && (next === null || due < next)) next = due;
    }
    return next;
  }

  /**
   * After a change: the alarm moves earlier if some part is due sooner than it is set. An
   * update the storage refuses (a full volume) is tried again shortly: the change that
   * asked for it is durable, and without its alarm a wait would never expire.
   */
  async update(): Promise<void> {
    try {
      await this.tryUpdate();
    } catch (err) {
      this.retry ??= setTimeout(() => {
        this.retry = null;
        this.update().catch((e: unknown) => console.error(`the alarm could not be set (retrying): ${(e as Error).message}`));
      }, this.retryMs);
      throw err;
    }
  }

  private async tryUpdate(): Promise<void> {
    // Called from inside a commit too: what it wrote is read, and the alarm set, once it returned.
    await null;
    const due = this.nextDueAt();
    if (due === null) return;
    if (this.set === undefined) {
      const stored = await this.storage.getAlarm();
      // Another update may have set it while this one read.
      if (this.set === undefined) this.set = stored;
    }
    if (this.set !== null && this.set <= due) return;
    await this.setAlarm(due);
  }

  /**
   * When a part's work landed and no part has anything due, the alarm is deleted: left set,
   * it would build a new instance of an idle object (evicted by then) only to find nothing
   * to do. Called off the hot path (a push that covered all activity, at most once a
   * `catalogSyncMs`), not per change: a busy object always has something due.
   */
  async clearIfIdle(): Promise<void> {
    if (this.set === null || this.nextDueAt() !== null) return;
    // Known unset before the delete lands: an update meanwhile sets it again, after the delete.
    this.set = null;
    try {
      await this.storage.deleteAlarm();
    } catch (err) {
      if (this.set === null) this.set = undefined;
      throw err;
    }
  }

  /** The object's `alarm()`: runs each part that is due, then sets the alarm to the earliest part left. */
  async run(): Promise<void> {
    // The alarm that fired is spent: an update while the parts run sets a new one.
    this.set = null;
    const started = Date.now();
    for (const p of this.parts) {
      const due = this.dueOf(p);
      if (!p.everyAlarm && (due === null || due > started)) continue;
      try {
        await p.runDue(started);
      } catch (err) {
        console.error(`alarm part ${p.name} failed (retrying): ${(err as Error).message}`);
      }
    }
    let next: number | null = null;
    for (const p of this.parts) {
      let due = this.dueOf(p);
      // Still due after its run: it failed, and is tried again shortly rather than at once.
      if (due !== null && due <= started) due = Date.now() + this.retryMs;
      if (due !== null && (next === null || due < next)) next = due;
    }
    if (next === null || (this.set !== null && this.set <= next)) return;
    await this.setAlarm(next);
  }

  private async setAlarm(at: number): Promise<void> {
    this.set = at;
    try {
      await this.storage.setAlarm(at);
    } catch (err) {
      // Not set after all: the next update reads it again.
      if (this.set === at) this.set = undefined;
      throw err;
    }
  }

  private dueOf(p: AlarmPart): number | null {
    try {
      return p.nextDueAt();
    } catch (err) {
      console.error(`alarm part ${p.name} could not say when it is due: ${(err as Error).message}`);
      return null;
    }
  }
}
