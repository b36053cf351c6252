import type { RuntimeConfig } from "../../src/platform/config.js";
import type { Env } from "../../src/platform/env.js";
import { catalogOf, workspaceOf } from "../../src/platform/stubs.js";
import type { AlarmPart } from "../lib/alarm-schedule.js";
import type { ThreadNews } from "../workspace/feed.js";
import type { EventLog } from "./log/event-log.js";
import { summarize, type ThreadState } from "./thread-state.js";

/** What the push uses of its Thread. */
export interface CatalogSyncThread {
  readonly env: Env;
  readonly config: Pick<RuntimeConfig, "catalogSyncMs" | "catalogSafetyMs">;
  readonly log: Pick<EventLog, "durableSeq" | "lastSeq">;
  state(): ThreadState | null;
  /** When the thread last changed, as its row shows it. */
  updatedAt(): string;
  reschedule(): Promise<void>;
  /** The push landed: the alarm goes if nothing else is due, so an idle thread is not woken for it. */
  settled(): Promise<void>;
  waitUntil(work: Promise<unknown>): void;
}

/**
 * The thread's summary, pushed to the catalog (the host's list) and to the workspace (its
 * feed). It reports when it next needs the alarm (a retry, or the safety net) through
 * `alarm`, and asks for the alarm to be set again when that moves.
 */
export class CatalogSync {
  /** The in-memory timer that pushes activity to the catalog; at most one at a time. */
  private activityTimer: ReturnType<typeof setTimeout> | null = null;
  /** Since when the catalog has not had this instance's activity (memory only: the alarm set for it survives the instance). */
  private unpushedSince: number | null = null;
  /** When a failed push is tried again. */
  private pushRetryAt: number | null = null;
  /** The summary the catalog and the workspace both took last, as JSON (memory only: a new instance pushes). */
  private pushed: string | null = null;
  /** What the workspace's feed has not been told yet; it rides the next summary push (memory only). */
  private readonly news: ThreadNews[] = [];

  readonly alarm: AlarmPart = {
    name: "catalog",
    // A new instance does not know whether the last one's push landed: any alarm pushes what changed.
    everyAlarm: true,
    nextDueAt: () => this.pushRetryAt ?? (this.unpushedSince !== null ? this.unpushedSince + this.thread.config.catalogSafetyMs : null),
    runDue: () => this.fromAlarm(),
  };

  constructor(private readonly thread: CatalogSyncThread) {}

  /** News for the workspace's feed, sent with the next push. */
  tell(news: ThreadNews): void {
    this.news.push(news);
  }

  /**
   * Activity reaches the catalog from an in-memory timer, at most once per
   * `catalogSyncMs`. A durable alarm per push would cost two more commits each time
   * (setting it and deleting it once fired), which with many busy threads took a fifth
   * off the append rate. The alarm stays as a safety net, `catalogSafetyMs` (a minute) after the first
   * activity no push has covered, so activity from just before a crash still reaches the
   * catalog after a restart; it moves only when it is later than that, about once a minute.
   */
  schedule(): void {
    if (!this.activityTimer)
      this.activityTimer = setTimeout(() => {
        this.activityTimer = null;
        void this.now();
      }, this.thread.config.catalogSyncMs);
    if (this.unpushedSince === null) {
      this.unpushedSince = Date.now();
      void this.thread.reschedule();
    }
  }

  /** Pushes now, which covers any timed push still pending; a failure arms the alarm to retry soon. */
  async now(): Promise<void> {
    if (this.activityTimer) clearTimeout(this.activityTimer);
    this.activityTimer = null;
    try {
      await this.sync();
    } catch {
      await this.retryPush();
    }
  }

  private async fromAlarm(): Promise<void> {
    try {
      await this.sync(true);
    } catch (err) {
      console.error(`thread ${this.thread.state()?.id}: the catalog missed a change, retrying: ${(err as Error).message}`);
      await this.retryPush();
    }
  }

  /**
   * The catalog has the thread up to `seq`, as it was at `takenAt`: the safety net waits for
   * activity after it (a busy thread's always comes during the push, and would otherwise
   * keep it due).
   */
  private pushedUpTo(seq: number, takenAt: number): void {
    this.unpushedSince = this.thread.log.lastSeq <= seq ? null : takenAt;
  }

  private async retryPush(): Promise<void> {
    this.pushRetryAt = Date.now() + this.thread.config.catalogSyncMs;
    await this.thread.reschedule();
  }

  /**
   * The summary goes to the catalog (the host's list) and to the workspace (its feed) at
   * once. Only the catalog is waited for: the workspace is shared by all its threads, and
   * a turn's end must not queue behind its commits. News the workspace did not take is
   * kept, and the safety alarm retries it; news it took is not sent again.
   */
  private async sync(onlyIfNewer = false): Promise<void> {
    const state = this.thread.state();
    if (!state) return;
    const takenAt = Date.now();
    const summary = summarize(state, this.thread.log.durableSeq, this.thread.updatedAt());
    const shown = JSON.stringify(summary);
    // The safety alarm of a thread whose last push landed has nothing to do: threads busy
    // together set their alarms together, and would otherwise all push at once.
    if (onlyIfNewer && shown === this.pushed && this.news.length === 0) {
      this.pushRetryAt = null;
      this.pushedUpTo(summary.lastSeq, takenAt);
      return;
    }
    const news = this.news.splice(0);
    const fed = workspaceOf(this.thread.env, state.spec.workspace)
      .threadChanged(summary, news)
      .then(() => true)
      .catch(async (err: unknown) => {
        this.news.unshift(...news);
        console.error(`thread ${summary.id}: the workspace feed missed a change, retrying: ${(err as Error).message}`);
        await this.retryPush();
        return false;
      });
    this.thread.waitUntil(fed);
    await catalogOf(this.thread.env).upsert(summary);
    this.pushedUpTo(summary.lastSeq, takenAt);
    this.thread.waitUntil(
      fed.then((took) => {
        if (!took) return;
        this.pushed = shown;
        this.pushRetryAt = null;
        // Activity since the push keeps the safety net (and its alarm) due.
        if (this.unpushedSince === null) return this.thread.settled();
      }),
    );
  }
}
