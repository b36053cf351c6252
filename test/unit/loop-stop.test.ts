import { describe, expect, it } from "vitest";
import type { LoopState } from "../../src/api/turns.js";
import { loopAfterTurn } from "../../objects/thread/orchestration/loop-step.js";

const running = (over: Partial<LoopState> = {}): LoopState => ({ status: "running", prompt: "go on", maxTurns: 5, until: "DONE", done: 0, reason: null, ...over });
const failed = { class: "quota", error: "spent" } as const;

describe("a loop after one of its turns", () => {
  it("counts the turn and keeps running while no stop rule holds", () => {
    expect(loopAfterTurn(running({ done: 2 }), null, "not yet")).toEqual({ loop: running({ done: 3 }), stop: null });
  });

  it("keeps running after a turn with no reply", () => {
    expect(loopAfterTurn(running(), null, null)).toEqual({ loop: running({ done: 1 }), stop: null });
  });

  it("finishes on max-turns when the turn it just ran is the last one allowed", () => {
    expect(loopAfterTurn(running({ done: 3 }), null, "more")).toEqual({ loop: running({ done: 4 }), stop: null });
    expect(loopAfterTurn(running({ done: 4 }), null, "more")).toEqual({ loop: running({ done: 5, status: "finished", reason: "max-turns" }), stop: "max-turns" });
    expect(loopAfterTurn(running({ maxTurns: 1, until: null }), null, "x")).toMatchObject({ stop: "max-turns", loop: { done: 1, status: "finished" } });
  });

  it("finishes on until-matched when the reply contains the text, case and all", () => {
    expect(loopAfterTurn(running(), null, "all DONE here")).toEqual({ loop: running({ done: 1, status: "finished", reason: "until-matched" }), stop: "until-matched" });
    expect(loopAfterTurn(running(), null, "done").stop).toBeNull();
    expect(loopAfterTurn(running(), null, "DON").stop).toBeNull();
  });

  it("never matches without an until text", () => {
    expect(loopAfterTurn(running({ until: null }), null, "DONE").stop).toBeNull();
  });

  it("says until-matched rather than max-turns when both hold", () => {
    expect(loopAfterTurn(running({ done: 4 }), null, "DONE")).toMatchObject({ stop: "until-matched", loop: { reason: "until-matched", done: 5 } });
  });

  it("pauses, not finishes, on a failed turn, and the failure wins over the other rules", () => {
    expect(loopAfterTurn(running({ done: 1 }), failed, null)).toEqual({ loop: running({ done: 2, status: "paused", reason: "turn-failed" }), stop: "turn-failed" });
    expect(loopAfterTurn(running({ done: 4 }), failed, "DONE")).toMatchObject({ stop: "turn-failed", loop: { status: "paused", done: 5 } });
  });

  it("leaves the loop it was given as it was", () => {
    const loop = running({ done: 4 });
    loopAfterTurn(loop, null, "DONE");
    expect(loop).toEqual(running({ done: 4 }));
  });
});
