import { describe, expect, it } from "vitest";
import { sim } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const front = useFront();

describe("the client's parallel step", () => {
  it("runs five children two at a time, starts none after the second fails, and gates the step", async () => {
    const c = front().client;
    const { threadId } = await c.spawn({ model: "sim-1" });
    const children = [
      { title: "slow", prompt: sim({ reply: "slow done", chunks: 4, delayMs: 200 }) },
      { title: "fails", prompt: sim({ fail: "server" }) },
      { title: "third", prompt: "three" },
      { title: "fourth", prompt: "four" },
      { title: "fifth", prompt: "five" },
    ];
    const step = await c.parallel(threadId, children, { concurrency: 2, gate: "auto", step: "build" });
    expect(step.children.map((r) => [r.title, r.state])).toEqual([
      ["slow", "completed"],
      ["fails", "failed"],
    ]);
    expect(step.skipped.map((s) => s.title)).toEqual(["third", "fourth", "fifth"]);
    expect(step.gate).toMatchObject({ mode: "auto", step: "build", passed: false });
    expect(step.gate!.reasons).toEqual([expect.stringContaining("(fails) failed")]);
    expect((await c.operations(threadId)).operations).toHaveLength(2);
  });

  it("runs every child at once when no hub sets a limit, and passes its gate when all complete", async () => {
    const c = front().client;
    expect((await c.limits()).hub.buildSeatLimit).toBeNull();
    const { threadId } = await c.spawn({ model: "sim-1" });
    const children = Array.from({ length: 4 }, (_, i) => ({ title: `child ${i}`, prompt: sim({ reply: `done ${i}`, chunks: 2, delayMs: 150 }) }));
    const step = await c.parallel(threadId, children, { gate: "auto" });
    expect(step.children.map((r) => r.state)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(step.skipped).toEqual([]);
    expect(step.gate).toMatchObject({ passed: true, reasons: [] });
    // All at once: every child started before any had settled (in the parent's log).
    const ops = (await c.operations(threadId)).operations;
    expect(Math.max(...ops.map((o) => o.startedSeq))).toBeLessThan(Math.min(...ops.map((o) => o.settledSeq!)));
  });
});
