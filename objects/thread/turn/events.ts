import type { EngineReport, TranscriptEntry } from "../../../src/api/engine.js";
import type { EventBodies } from "../../../src/api/events.js";
import { BlobSaveError } from "../log/blob-store.js";
import { restage, type Accepted, type ThreadAccess } from "../thread-access.js";

export type UsageReport = Extract<EngineReport, { type: "usage" }>;

/**
 * An event of the running turn, prepared (its large body saved): `write` appends it inside
 * a commit, and `degraded` says it is the stub of a body that could not be saved.
 */
export interface PreparedTurnEvent {
  write(): Accepted;
  degraded: boolean;
}

type UsageThread = Pick<ThreadAccess, "prepareOrRefuse" | "commits" | "append" | "state" | "saveState">;
type EventThread = Pick<ThreadAccess, "log" | "commits" | "append" | "tables" | "state" | "saveState" | "syncCatalogNow">;

/** A model call's `usage` event and its cost on the thread's row, prepared; null when its body was refused. `inCommit` runs inside the same commit. */
export async function prepareUsage(thread: UsageThread, turnId: string, report: UsageReport, inCommit: () => void): Promise<(() => void) | null> {
  const body = { turnId, model: report.model, inputTokens: report.inputTokens, outputTokens: report.outputTokens, usd: report.usd };
  const prepared = await thread.prepareOrRefuse("usage", body);
  if (!prepared.ok) return null;
  return () => {
    thread.append(prepared.value);
    const cost = thread.state()!.cost;
    if (report.usd === null) cost.unpricedCalls = (cost.unpricedCalls ?? 0) + 1;
    else cost.usd = Math.round((cost.usd + report.usd) * 1e9) / 1e9;
    cost.inputTokens += report.inputTokens;
    cost.outputTokens += report.outputTokens;
    inCommit();
    thread.saveState();
  };
}

/** A model call's `usage` event and its cost on the thread's row; `inCommit` runs inside the same commit. */
export async function recordUsage(thread: UsageThread, turnId: string, report: UsageReport, inCommit: () => void): Promise<void> {
  const write = await prepareUsage(thread, turnId, report, inCommit);
  if (write) await thread.commits.write(write);
}

/**
 * Prepares an event of the running turn and its transcript entry. A body that cannot
 * be saved (the blob store failed) is recorded without its content and marks the
 * thread degraded: the turn goes on, because the engine still holds the content, but
 * no later turn starts on a history with a hole in it until someone recovers it.
 */
export async function prepareTurnEvent<K extends "reply" | "tool-call" | "tool-result">(
  thread: EventThread,
  kind: K,
  body: EventBodies[K],
  entry: TranscriptEntry,
): Promise<PreparedTurnEvent> {
  try {
    const prepared = await thread.log.prepare(kind, body);
    return {
      degraded: false,
      write: () => {
        const e = thread.append(prepared);
        thread.tables.addEntry(e.seq, entry);
        return e;
      },
    };
  } catch (err) {
    if (!(err instanceof BlobSaveError)) throw err;
    const lost = `[this ${kind} could not be saved (${err.key}); the history has a gap here]`;
    const stub = { ...body, lost: err.key, ...(kind === "reply" ? { text: "" } : kind === "tool-result" ? { output: "" } : { input: null }) };
    const stubEntry: TranscriptEntry =
      entry.role === "tool-result" ? { ...entry, output: lost } : entry.role === "tool-call" ? { ...entry, input: {} } : { role: "assistant", text: lost };
    const state = thread.state()!;
    const ref = { key: err.key, index: state.turn?.index ?? state.turns, tag: kind };
    const event = await thread.log.prepare(kind, stub as EventBodies[K]);
    const degraded = await thread.log.prepare("degraded", { ...ref, error: err.message });
    return {
      degraded: true,
      write: () => {
        const written = thread.append(event);
        thread.tables.addEntry(written.seq, stubEntry);
        thread.append(degraded);
        // The first hole is the one named: the history is whole up to it.
        thread.state()!.degraded ??= ref;
        restage(thread);
        return written;
      },
    };
  }
}

/** Records an event of the running turn and its transcript entry (`prepareTurnEvent`), in a commit of its own. */
export async function recordTurnEvent<K extends "reply" | "tool-call" | "tool-result">(
  thread: EventThread,
  kind: K,
  body: EventBodies[K],
  entry: TranscriptEntry,
): Promise<Accepted> {
  const prepared = await prepareTurnEvent(thread, kind, body, entry);
  const e = await thread.commits.write(prepared.write);
  if (prepared.degraded) void thread.syncCatalogNow();
  return e;
}
