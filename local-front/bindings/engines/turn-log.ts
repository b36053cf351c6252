import type { TurnFailure, TurnRequest } from "../../../src/api/engine.js";
import { log } from "../../process/log.js";

/**
 * The front's line for a turn's run on an engine: ids, engine, model, outcome, failure
 * class and duration. Never the failure's text or any input: those may quote a message or
 * a provider's answer, and this log is read by people who may not read threads.
 *
 * A run the provider refused as longer than the window (`windowFull`) is not the turn's
 * end: the runtime reduces the context and runs the turn again under the same id, and
 * that run's line is the turn's; when no reduction makes room the runtime fails the turn
 * and says so (`POST /turn-ends`). It is said at info level as `window-full`, never as a
 * failed turn (docs/compaction.md, "Recovery inside a turn").
 */
export function logTurnEnd(request: Pick<TurnRequest, "threadId" | "turnId" | "engine" | "model">, failure: Pick<TurnFailure, "class" | "windowFull"> | null, startedAt: number): void {
  const fields = {
    thread: request.threadId,
    turn: request.turnId,
    engine: request.engine,
    model: request.model,
    outcome: failure?.windowFull ? "window-full" : failure ? "failed" : "completed",
    class: failure?.windowFull ? null : (failure?.class ?? null),
    durationMs: Date.now() - startedAt,
  };
  if (failure?.windowFull) log.info("turn's context refused as too long; the runtime reduces it", fields);
  else if (failure && failure.class !== "interrupted") log.warn("turn failed", fields);
  else log.info("turn ended", fields);
}
