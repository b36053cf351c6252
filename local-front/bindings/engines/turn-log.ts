import type { FailureClass, TurnRequest } from "../../../src/api/engine.js";
import { log } from "../../process/log.js";

/**
 * The front's line for a turn that ended: ids, engine, model, outcome, failure class and
 * duration. Never the failure's text or any input: those may quote a message or a
 * provider's answer, and this log is read by people who may not read threads.
 */
export function logTurnEnd(request: TurnRequest, failure: FailureClass | null, startedAt: number): void {
  const fields = {
    thread: request.threadId,
    turn: request.turnId,
    engine: request.engine,
    model: request.model,
    outcome: failure ? "failed" : "completed",
    class: failure,
    durationMs: Date.now() - startedAt,
  };
  if (failure && failure !== "interrupted") log.warn("turn failed", fields);
  else log.info("turn ended", fields);
}
