import type { FailureClass } from "../../../src/api/engine.js";
import type { EngineModel } from "../../../src/api/threads.js";
import { onChain, seatModel, type SeatState, type ThreadState } from "../thread-state.js";

/**
 * Where a failed turn moves on the thread's failover chain (SPEC "Errors", failover):
 * `quota` to the next entry, `auth` to the next entry on another engine. No other class
 * fails over: `model-not-found` and `tool` never do, and `unsupported-model` would retry
 * the same model; the account pool records a model's refusal on the account instead, and
 * the thread's next turn of that model goes to another account of the provider
 * (docs/credentials.md). Null when nothing is left,
 * and for a seat off the chain (joined later, or replaced: it runs on what it was given).
 */
export function nextOnChain(s: ThreadState, seat: SeatState, failure: FailureClass): { step: number; to: EngineModel } | null {
  if (!onChain(seat)) return null;
  const chain = s.spec.fallback ?? [];
  const current = seatModel(s, seat);
  for (let step = s.chainStep + 1; step <= chain.length; step++) {
    const to = chain[step - 1]!;
    if (failure === "quota") return { step, to };
    if (failure === "auth" && to.engine !== current.engine) return { step, to };
  }
  return null;
}
