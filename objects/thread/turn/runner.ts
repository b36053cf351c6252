import { EngineReport, type TurnFailure, type TurnStop } from "../../../src/api/engine.js";

export interface TurnEnd {
  outcome: "completed" | "failed";
  failure?: TurnFailure;
  stop?: TurnStop;
  /**
   * The engine host went away mid-turn: its stream broke or stopped without an `end`.
   * The engine host is part of the host, so this is the host going down (a crash inside
   * an engine is reported with an `end` line); the turn is recorded as lost.
   */
  lost?: boolean;
}

export type DurableReport = Exclude<EngineReport, { type: "delta" | "ping" | "end" }>;

/** Reports that only append their event: several of them that came together are written in one commit. */
export type GroupedReport = Extract<DurableReport, { type: "reply" | "tool-call" | "usage" }>;
const GROUPED: ReadonlySet<string> = new Set<GroupedReport["type"]>(["reply", "tool-call", "usage"]);
export const isGrouped = (r: EngineReport | null): r is GroupedReport => r !== null && GROUPED.has(r.type);

/**
 * What the runner hands its owner: deltas at once, durable reports in order, each group
 * settled before anything after it is handed on. A group is one report, or a run of
 * `GROUPED` reports that arrived together (a model call's reply, tool calls and usage
 * come in one write of the engine host): each is its own event, in one commit.
 */
export interface TurnSink {
  delta(frame: Record<string, unknown>): void;
  durable(reports: readonly DurableReport[]): Promise<void>;
}

/**
 * Reads one turn's report stream from the engines binding. A line that is not a valid
 * report fails the turn (class `session`); a stream that breaks or stops before its
 * `end` line means the engine host went away, and the turn is lost. Either way the
 * thread stays usable afterwards.
 */
export class TurnRunner {
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  private cancelled: TurnFailure | null = null;

  constructor(readonly turnId: string) {}

  async run(response: Response, sink: TurnSink): Promise<TurnEnd> {
    if (!response.body) return fail("unknown", "the engine answered without a report stream");
    this.reader = response.body.getReader();
    if (this.cancelled) {
      void this.reader.cancel(this.cancelled.error).catch(() => {});
      return { outcome: "failed", failure: this.cancelled };
    }
    const decoder = new TextDecoder();
    let buffered = "";
    const group: DurableReport[] = [];
    // A report this side cannot record is this side's fault, not the engine host's: the
    // turn fails here (and the engine host, seeing the stream cut, stops it).
    const settle = async (): Promise<TurnEnd | null> => {
      if (group.length === 0) return null;
      const reports = group.splice(0);
      try {
        await sink.durable(reports);
      } catch (err) {
        void this.reader?.cancel().catch(() => {});
        return fail("unknown", `the runtime could not record the engine's ${reports.map((r) => r.type).join(" and ")}: ${(err as Error).message}`);
      }
      return this.cancelled ? { outcome: "failed", failure: this.cancelled } : null;
    };
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (this.cancelled) return { outcome: "failed", failure: this.cancelled };
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          const report = parse(line);
          if (isGrouped(report)) {
            group.push(report);
            continue;
          }
          const stopped = await settle();
          if (stopped) return stopped;
          if (!report) {
            // Cutting the stream makes the engine host stop the turn it can no longer report.
            void this.reader.cancel().catch(() => {});
            return fail("session", `the engine sent a malformed report: ${line.slice(0, 200)}`);
          }
          if (report.type === "end") {
            readToClose(this.reader);
            return report.outcome === "completed"
              ? { outcome: "completed", ...(report.stop ? { stop: report.stop } : {}) }
              : { outcome: "failed", failure: report.failure ?? { class: "unknown", error: "the engine failed the turn without a reason" } };
          }
          if (report.type === "delta") sink.delta(report.frame);
          else if (report.type !== "ping") {
            group.push(report);
            const failed = await settle();
            if (failed) return failed;
          }
          if (this.cancelled) return { outcome: "failed", failure: this.cancelled };
        }
        const stopped = await settle();
        if (stopped) return stopped;
      }
    } catch (err) {
      if (this.cancelled) return { outcome: "failed", failure: this.cancelled };
      return lost(`the engine host's report stream broke: ${(err as Error).message}`);
    }
    return lost("the engine host stopped reporting before the turn ended");
  }

  /** Ends the turn from this side, whatever the engine does next. */
  cancel(failure: TurnFailure): void {
    if (this.cancelled) return;
    this.cancelled = failure;
    void this.reader?.cancel(failure.error).catch(() => {});
  }
}

/**
 * After `end` only the stream's close is left to come. Reading it lets the engines
 * binding's connection carry the next turn: a response left unread is closed with its
 * connection, and every turn connected anew. Anything more than the close is not the
 * protocol, and is cut.
 */
function readToClose(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  void reader
    .read()
    .then((r) => (r.done ? undefined : reader.cancel()))
    .catch(() => {});
}

function parse(line: string): EngineReport | null {
  try {
    const parsed = EngineReport.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function lost(why: string): TurnEnd {
  return { outcome: "failed", failure: { class: "session", error: why }, lost: true };
}

function fail(cls: TurnFailure["class"], error: string): TurnEnd {
  return { outcome: "failed", failure: { class: cls, error } };
}
