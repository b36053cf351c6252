import { describe, expect, it } from "vitest";
import { RuntimeClient } from "../../client/index.js";
import { sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const front = useFront();

/** A client that says when it has seen the child titled `title` settle: its step decides on that answer. */
class Watching extends RuntimeClient {
  readonly settled: Promise<void>;
  private seen!: () => void;

  constructor(
    baseUrl: string,
    private readonly title: string,
  ) {
    super({ baseUrl, pollMs: 200 });
    this.settled = new Promise((resolve) => (this.seen = resolve));
  }

  override async operation(id: string, operation: string): ReturnType<RuntimeClient["operation"]> {
    const op = await super.operation(id, operation);
    if (op.title === this.title && op.state !== "open") this.seen();
    return op;
  }
}

describe("the client's parallel step", () => {
  it("runs five children two at a time, starts none after the second fails, and gates the step", async () => {
    const c = new Watching(front().url, "fails");
    const { threadId } = await c.spawn({ model: "sim-1" });
    const children = [
      // Holds its slot with a question until the step has seen the other child fail.
      { title: "slow", prompt: sim({ ask: "may I finish?", reply: "slow done" }) },
      { title: "fails", prompt: sim({ fail: "server" }) },
      { title: "third", prompt: "three" },
      { title: "fourth", prompt: "four" },
      { title: "fifth", prompt: "five" },
    ];
    const stepping = c.parallel(threadId, children, { concurrency: 2, gate: "auto", step: "build" });
    await c.settled;
    const slow = await waitFor(async () => (await c.operations(threadId)).operations.find((o) => o.title === "slow")?.child);
    const requestId = await waitFor(async () => (await c.turn(slow)).waitingOn.questions[0]);
    expect((await c.answer(slow, requestId, "yes")).status).toBe("answered");
    const step = await stepping;
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
    // Each child holds its slot with a question: all four waiting at once shows that every
    // child started before any settled, whatever the machine's speed.
    const children = Array.from({ length: 4 }, (_, i) => ({ title: `child ${i}`, prompt: sim({ ask: `may ${i} finish?`, reply: `done ${i}` }) }));
    const stepping = c.parallel(threadId, children, { gate: "auto" });
    const waiting = await waitFor(async () => {
      const ops = (await c.operations(threadId)).operations;
      if (ops.length < 4 || ops.some((o) => o.state !== "open" || !o.child)) return null;
      const questions = await Promise.all(ops.map(async (o) => (await c.turn(o.child!)).waitingOn.questions[0]));
      return questions.every(Boolean) ? ops.map((o, i) => ({ child: o.child!, requestId: questions[i]! })) : null;
    });
    for (const { child, requestId } of waiting) expect((await c.answer(child, requestId, "yes")).status).toBe("answered");
    const step = await stepping;
    expect(step.children.map((r) => r.state)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(step.skipped).toEqual([]);
    expect(step.gate).toMatchObject({ passed: true, reasons: [] });
  });
});
