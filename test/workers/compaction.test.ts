import { describe, expect, it } from "vitest";
import { newThread, value } from "./support.js";

type Stub = Awaited<ReturnType<typeof newThread>>["stub"];

async function events(stub: Stub): Promise<{ seq: number; kind: string; body: any }[]> {
  return JSON.parse(value(await stub.page({ after: 0, limit: 1000, waitMs: 0 }))).events;
}

/** A message of about 200 tokens that the scripted engine echoes: a turn adds about 450 to a 4,096-token window. */
const message = (n: number) => `smallwindow ${n} ${"word ".repeat(160)}`;

describe("a full window in the default configuration (scripted engine, no summary ever written)", () => {
  it("is reduced at once by dropping the oldest turns whole: every turn completes, and no forced window waits", async () => {
    const { stub } = await newThread({ permissions: "allow" });
    for (let n = 1; n <= 24; n++) expect(value(await stub.send({ text: message(n) })).outcome, `turn ${n}`).toBe("completed");
    const log = await events(stub);
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
    const forced = log.filter((e) => e.kind === "window-pending" && e.body.forced);
    expect(forced.length).toBeGreaterThan(0);
    // No mode a caller could pick would make room (no tool output, one-reply turns, no summary): nothing to wait for.
    expect(forced.every((e) => e.body.deadlineMs === 0)).toBe(true);
    const dispositions = log.filter((e) => e.kind === "compaction-disposition").map((e) => e.body);
    expect(dispositions).toEqual(forced.map(() => ({ settledBy: "at-once", mode: "drop" })));
    const drops = log.filter((e) => e.kind === "window" && e.body.kind === "drop");
    expect(drops.length).toBe(forced.length);
    for (const drop of drops) {
      expect(drop.body.summaryModel).toBeUndefined();
      expect(drop.body.summaryFailed).toMatch(/the scripted engine writes no summaries/);
      expect(drop.body.tokensAfter).toBeLessThan(drop.body.tokensBefore);
      // The system line just after it names the seqs it cut.
      const line = log.find((e) => e.seq === drop.seq + 1)!;
      const seqs = drop.body.cut.map(([a, b]: [number, number]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
      expect(line.body.text).toContain(`(events ${seqs};`);
    }
    const status = value(await stub.compactionStatus());
    expect(status.pending).toBeNull();
    expect(status.tokens!).toBeLessThan(status.forcedAt!);
  });

  it("offers a summary to callers, as the thread's own model can always be asked", async () => {
    const { stub } = await newThread({ permissions: "allow" });
    for (let n = 1; n <= 9; n++) value(await stub.send({ text: message(n) }));
    const warning = (await events(stub)).find((e) => e.kind === "window-pending");
    expect(warning?.body.options).toEqual(["microcompact", "collapse", "summary"]);
    // The summary fails here: it cuts nothing, and the cheap kinds that run instead have nothing to cut.
    const done = value(await stub.compact("summary"));
    expect(done.reductions).toEqual([]);
    const said = (await events(stub)).filter((e) => e.kind === "system").map((e) => e.body.text);
    expect(said.some((t) => t.startsWith("no model wrote the summary (the scripted engine writes no summaries)"))).toBe(true);
  });

  it("waits for the caller while two modes or more would each make room, and settles by the caller's choice", async () => {
    const { stub } = await newThread({ permissions: "allow" });
    const forcedWindow = async () => {
      for (let n = 1; n <= 12; n++) {
        void stub.send({ text: `withtool ${message(n)}` });
        for (let i = 0; i < 400; i++) {
          const status = value(await stub.compactionStatus());
          if (status.pending?.forced) return status.pending;
          const turn = value(await stub.turnStatus());
          if (!turn.running && turn.queued === 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      throw new Error("no forced window in 12 turns");
    };
    const pending = await forcedWindow();
    // Stubbing the tool outputs and collapsing the turns would each make room: the deadline runs.
    expect(pending.deadlineMs).toBe(10_000);
    expect(value(await stub.turnStatus())).toMatchObject({ running: false, queued: 1 });
    expect(value(await stub.compact("microcompact")).reductions.map((w) => w.kind)).toEqual(["microcompact"]);
    for (let i = 0; i < 400 && value(await stub.turnStatus()).queued > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const dispositions = (await events(stub)).filter((e) => e.kind === "compaction-disposition").map((e) => e.body);
    expect(dispositions).toEqual([{ settledBy: "request", mode: "microcompact" }]);
  });
});
