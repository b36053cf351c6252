import { afterEach, describe, expect, it, vi } from "vitest";
import { collectWhenIdle, IDLE_TICK_MS } from "../../local-front/process/idle-collect.js";

afterEach(() => vi.useRealTimers());

/** A front whose CPU use per tick is scripted: `perTick[i]` ms of CPU during tick i. */
function run(perTick: number[]): number[] {
  vi.useFakeTimers();
  let cpu = 0;
  let tick = 0;
  const collectedAt: number[] = [];
  const stop = collectWhenIdle(() => {
    collectedAt.push(tick);
    cpu += 80; // the collection's own CPU
  }, () => cpu);
  for (const used of perTick) {
    cpu += used;
    tick++;
    vi.advanceTimersByTime(IDLE_TICK_MS);
  }
  stop();
  return collectedAt;
}

describe("collecting the front's garbage when it goes quiet", () => {
  it("collects once after the start, when the first quiet tick comes", () => {
    // The start's CPU is counted before the first tick, as in a front.
    expect(run([1500, 10, 10, 10, 10])).toEqual([2]);
  });

  it("collects again once after each burst of work, never while the front is busy", () => {
    expect(run([1500, 10, 900, 900, 10, 10, 5, 400, 20, 20])).toEqual([2, 5, 9]);
  });

  it("does not collect again while the front stays idle, its own timers' CPU adding up", () => {
    expect(run([1500, 10, ...Array<number>(60).fill(20)])).toEqual([2]);
  });

  it("does nothing without gc (a front started without --expose-gc)", () => {
    vi.useFakeTimers();
    const stop = collectWhenIdle(undefined);
    expect(vi.getTimerCount()).toBe(0);
    stop();
  });
});
