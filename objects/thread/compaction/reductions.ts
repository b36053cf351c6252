import type { CompactionMode, WindowBody, WindowTrigger } from "../../../src/api/compaction.js";
import {
  dropEntry,
  estimateEntry,
  planDrop,
  planOf,
  rangesOf,
  savingOf,
  summaryEntry,
  summarySource,
  targetOf,
  type WindowSettings,
} from "../../../src/rules/compaction.js";
import type { ThreadAccess } from "../thread-access.js";
import { curatorSummary } from "./curator.js";
import type { WindowRecords } from "./records.js";
import { CHEAP, compactionOptions, type Recorded, type WindowMeter } from "./window.js";

/** What the reductions use of their Thread: its transcript, its running turn, and the curator's summary's account rules. */
export type ReductionsThread = Pick<ThreadAccess, "env" | "config" | "state" | "tables">;

/** What the reductions use of the window's other parts. */
export interface ReductionParts {
  readonly meter: Pick<WindowMeter, "settings" | "lines" | "tokens" | "ownsSession">;
  readonly records: Pick<WindowRecords, "say" | "record" | "refuse">;
  /** The engine's own compaction of its session: the window it recorded, or why not. */
  askEngine(trigger: WindowTrigger, turn: number): Promise<Recorded | string>;
  /** A delegation's child has not answered: a cut (collapse, summary) waits for it (WindowBlocked). */
  delegationOpen(): boolean;
}

/** The reductions of the context: the kinds a caller or the runtime asks for, and the last resort's drop of the oldest turns. */
export class Reductions {
  constructor(
    private readonly thread: ReductionsThread,
    private readonly parts: ReductionParts,
  ) {}

  /**
   * Runs `modes` in order until the context, with the messages waiting for the next turn,
   * is under the target; each that cuts something is one `window` event. A summary that no
   * model wrote cuts nothing: the cheap kinds not yet run take its place, their events
   * saying why (`summaryFailed`). `forcedWindow`: the reduction settles a forced window, so
   * an engine's next session replaces one too full to resume (`resume-skipped`). Answers
   * the reductions, and why no summary was written when one was asked and failed.
   */
  async reduce(modes: readonly CompactionMode[], trigger: WindowTrigger, turn: number, over: Partial<WindowSettings> = {}, forcedWindow = false): Promise<{ done: Recorded[]; summaryFailed?: string }> {
    const { meter, records } = this.parts;
    const settings = meter.settings(over);
    const lines = meter.lines();
    const done: Recorded[] = [];
    const queue = [...modes];
    let summaryFailed: string | undefined;
    // A summary nobody wrote gives way to the cheap kinds not run yet, saying why.
    const insteadOfSummary = async (why: string, line: string) => {
      summaryFailed = why;
      await records.say("error", `${line} (${why}); the cheap reductions run instead`);
      queue.push(...CHEAP.filter((k) => !done.some((d) => d.kind === k) && !queue.includes(k)));
    };
    const under = (tokens: number) => lines !== null && tokens + this.thread.tables.queuedTokens() <= targetOf(lines);
    let blocked = false;
    for (let kind = queue.shift(); kind; kind = queue.shift()) {
      if (!compactionOptions().includes(kind)) continue;
      // Stubbing tool outputs keeps the conversation's shape; a cut would take the delegation's context before its result joins.
      if (kind !== "microcompact" && this.parts.delegationOpen()) {
        blocked = true;
        continue;
      }
      if (kind === "summary" && meter.ownsSession()) {
        const compacted = await this.parts.askEngine(trigger, turn);
        if (typeof compacted !== "string") {
          done.push(compacted);
          // What the runtime's cheap kinds would add is a new session, which discards this one.
          break;
        }
        await insteadOfSummary(compacted, "the engine did not compact its session");
        continue;
      }
      const view = this.thread.tables.context();
      const cut = planOf(kind, view, settings);
      if (cut.size === 0) continue;
      const before = meter.tokens();
      let body: WindowBody;
      if (kind === "summary") {
        const written = await curatorSummary(this.thread, summarySource(view, cut).map((h) => h.entry));
        if ("error" in written) {
          await insteadOfSummary(written.error, "no model wrote the summary");
          continue;
        }
        const added = estimateEntry(summaryEntry(rangesOf(view, cut), written.summary));
        body = { kind, cut: rangesOf(view, cut), tokensBefore: before, tokensAfter: Math.max(0, before - savingOf(kind, view, cut, added)), trigger, summaryModel: written.model, summary: written.summary };
      } else {
        body = { kind, cut: rangesOf(view, cut), tokensBefore: before, tokensAfter: Math.max(0, before - savingOf(kind, view, cut)), trigger, ...(summaryFailed ? { summaryFailed } : {}) };
      }
      done.push(await records.record(body, turn, done.length === 0, forcedWindow));
      if (under(body.tokensAfter)) break;
    }
    if (blocked && done.length === 0)
      await records.refuse("WindowBlocked", "WindowBlocked: a delegation of this thread has not answered; the context is not cut until its result has joined", forcedWindow, undefined);
    return { done, ...(summaryFailed ? { summaryFailed } : {}) };
  }

  /**
   * The last resort, when the runtime's choice (a summary among it) left the context
   * forced: the oldest turns leave it whole until it is under the target; a running turn
   * (inside a recovery) keeps everything from its first input on, since it goes on from
   * them. A system line names the cut seqs and why no summary did it: `summaryFailed`,
   * else what `before` (this round's reductions so far) shows.
   */
  async dropOldest(trigger: WindowTrigger, turn: number, before: readonly Recorded[], summaryFailed: string | undefined): Promise<Recorded[]> {
    const { meter, records } = this.parts;
    const lines = meter.lines();
    // A cut waits for an open delegation's result; the kinds before this one said so (WindowBlocked).
    if (!lines || this.parts.delegationOpen()) return [];
    const view = this.thread.tables.context();
    const tokens = meter.tokens();
    // In a recovery the provider refused what the count says fits: at least one turn goes.
    const excess = tokens + this.thread.tables.queuedTokens() - targetOf(lines);
    const cut = planDrop(view, trigger === "recovery" ? Math.max(1, excess) : excess, this.runningFrom());
    if (cut.size === 0) return [];
    const ranges = rangesOf(view, cut);
    const why = summaryFailed ?? (before.some((w) => w.kind === "summary") ? "the summary left too little room" : "no summary could make room");
    const body: WindowBody = { kind: "drop", cut: ranges, tokensBefore: tokens, tokensAfter: Math.max(0, tokens - savingOf("drop", view, cut, estimateEntry(dropEntry(ranges)))), trigger, summaryFailed: why };
    const recorded = await records.record(body, turn, before.length === 0, trigger !== "recovery");
    // Said once the cut is committed: a record that fails must not leave a line announcing it.
    const seqs = ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
    await records.say("error", `the oldest turns left the context to make room (events ${seqs}; ${why})`);
    return [recorded];
  }

  /**
   * The transcript row of the running turn's first input. Read from the transcript as
   * recorded, so a reduction that already cut that message still bounds the drop; its
   * steering messages are inputs too, but join later. Undefined with no turn running, or
   * none of its messages in the transcript.
   */
  private runningFrom(): number | undefined {
    const inputs = new Set(this.thread.state()!.turn?.inputs ?? []);
    if (inputs.size === 0) return undefined;
    return this.thread.tables.held().find((h) => inputs.has(h.seq) && h.entry.role === "user")?.row;
  }
}
