import type { TurnFailure } from "../../../src/api/engine.js";
import type { EventBodies } from "../../../src/api/events.js";
import type { LoopState } from "../../../src/api/turns.js";

/** Why a running loop stops after one of its turns. */
export type LoopStop = EventBodies["loop-stopped"]["reason"];

/** What a running loop becomes after one of its turns: the turn counted, and stopped (and why) or still running. */
export function loopAfterTurn(loop: LoopState, failure: TurnFailure | null, reply: string | null): { loop: LoopState; stop: LoopStop | null } {
  const done = loop.done + 1;
  const stop = failure
    ? "turn-failed"
    : loop.until !== null && reply?.includes(loop.until)
      ? "until-matched"
      : done >= loop.maxTurns
        ? "max-turns"
        : null;
  if (!stop) return { loop: { ...loop, done }, stop };
  return { loop: { ...loop, done, status: stop === "turn-failed" ? "paused" : "finished", reason: stop }, stop };
}
