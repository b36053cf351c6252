import { describe, expect, it } from "vitest";
import { FAILURE_CLASSES, type FailureClass } from "../../src/api/engine.js";
import type { EngineModel, ThreadSpec } from "../../src/api/threads.js";
import { nextOnChain } from "../../objects/thread/turn/failover.js";
import { firstSeat, type ThreadState } from "../../objects/thread/thread-state.js";

function thread(primary: EngineModel, fallback: EngineModel[] | null, chainStep = 0): ThreadState {
  const spec: ThreadSpec = {
    workspace: null,
    title: null,
    role: "chat",
    type: "chat",
    ...primary,
    permissions: "ask",
    cwd: null,
    account: null,
    proxyEnv: null,
    fallback,
    approvalTimeoutMs: null,
    questionTimeoutMs: null,
    onBusy: "queue",
  };
  return {
    id: "t1",
    spec,
    parent: null,
    forkedAtSeq: null,
    createdAt: "2030-01-01T00:00:00.000Z",
    archivedAt: null,
    archiveReason: null,
    stage: "running",
    cost: { usd: 0, inputTokens: 0, outputTokens: 0 },
    seatLease: null,
    turn: null,
    turns: 1,
    degraded: null,
    loop: null,
    chainStep,
    seats: [firstSeat(spec, 1)],
    holder: "main",
  };
}

/** The chain moves the first seat: the one made from the spec. */
const onSeat = (s: ThreadState, failure: FailureClass) => nextOnChain(s, s.seats[0]!, failure);

const piSim = { engine: "pi", model: "sim-1" } as const;
const piGpt5 = { engine: "pi", model: "gpt-5" } as const;
const piGpt4o = { engine: "pi", model: "gpt-4o" } as const;
const aSonnet = { engine: "engine_a", model: "sonnet" } as const;
const aOpus = { engine: "engine_a", model: "opus" } as const;

describe("failing over on a quota failure", () => {
  const chain = [piGpt5, aSonnet, piGpt4o];

  it("moves to the next entry, whatever its engine", () => {
    expect(onSeat(thread(piSim, chain, 0), "quota")).toEqual({ step: 1, to: piGpt5 });
    expect(onSeat(thread(piSim, chain, 1), "quota")).toEqual({ step: 2, to: aSonnet });
    expect(onSeat(thread(piSim, chain, 2), "quota")).toEqual({ step: 3, to: piGpt4o });
  });

  it("has nowhere to go at the end of the chain, or without one", () => {
    expect(onSeat(thread(piSim, chain, 3), "quota")).toBeNull();
    expect(onSeat(thread(piSim, null), "quota")).toBeNull();
    expect(onSeat(thread(piSim, []), "quota")).toBeNull();
  });
});

describe("failing over on an auth failure", () => {
  it("skips entries on the engine that failed, to the next one on another engine", () => {
    expect(onSeat(thread(piSim, [piGpt5, piGpt4o, aSonnet], 0), "auth")).toEqual({ step: 3, to: aSonnet });
  });

  it("compares with the engine the thread runs on now, not the spec's", () => {
    // At step 1 the thread runs on pi: engine_a, the spec's engine, is another engine.
    expect(onSeat(thread(aOpus, [piGpt5, aSonnet], 1), "auth")).toEqual({ step: 2, to: aSonnet });
    expect(onSeat(thread(aOpus, [aSonnet, piGpt5], 1), "auth")).toEqual({ step: 2, to: piGpt5 });
  });

  it("has nowhere to go when every entry left is on the same engine", () => {
    expect(onSeat(thread(piSim, [piGpt5, piGpt4o], 0), "auth")).toBeNull();
    expect(onSeat(thread(piSim, [piGpt5, aSonnet, aOpus], 2), "auth")).toBeNull();
  });
});

describe("failure classes that never fail over", () => {
  const others = FAILURE_CLASSES.filter((c): c is Exclude<FailureClass, "quota" | "auth"> => c !== "quota" && c !== "auth");

  it("covers every class but quota and auth", () => {
    expect(others).toEqual(["model-not-found", "unsupported-model", "engine-unavailable", "tool", "permission", "session", "closed", "interrupted", "stalled", "unknown"]);
  });

  it.each(others)("%s stays on the entry it failed on", (failure) => {
    expect(onSeat(thread(piSim, [aSonnet, piGpt5], 0), failure)).toBeNull();
  });
});

describe("a seat off the chain", () => {
  it("never fails over: a replaced first seat runs on what it was given", () => {
    const s = thread(piSim, [piGpt5], 0);
    s.seats[0]!.replacedSeqs.push(5);
    expect(onSeat(s, "quota")).toBeNull();
  });
});
