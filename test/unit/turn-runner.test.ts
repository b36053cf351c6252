import { describe, expect, it } from "vitest";
import type { EngineReport } from "../../src/api/engine.js";
import { TurnRunner, type DurableReport } from "../../objects/thread/turn/runner.js";

const line = (r: EngineReport) => `${JSON.stringify(r)}\n`;
const reply: EngineReport = { type: "reply", text: "hello" };
const usage: EngineReport = { type: "usage", model: "sim-1", inputTokens: 3, outputTokens: 2, usd: null };
const call: EngineReport = { type: "tool-call", callId: "c1", name: "shell", input: { command: "true" } };
const result: EngineReport = { type: "tool-result", callId: "c1", name: "shell", output: "exit code 0", isError: false };
const end: EngineReport = { type: "end", outcome: "completed" };

/** A report stream that hands out one chunk a read (nothing read ahead), and notes when a read found it closed. */
function stream(chunks: string[]): { response: Response; readToClose: () => boolean } {
  let closedRead = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) {
          closedRead = true;
          controller.close();
        } else controller.enqueue(new TextEncoder().encode(next));
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(body), readToClose: () => closedRead };
}

async function run(chunks: string[]): Promise<{ groups: string[][]; readToClose: boolean }> {
  const groups: string[][] = [];
  const s = stream(chunks);
  const ended = await new TurnRunner("turn_1").run(s.response, {
    delta: () => {},
    durable: async (reports: readonly DurableReport[]) => void groups.push([reports].flat().map((r) => r.type)),
  });
  expect(ended).toEqual({ outcome: "completed" });
  // The close is read after the runner returned the turn's end.
  await new Promise((resolve) => setTimeout(resolve, 10));
  return { groups, readToClose: s.readToClose() };
}

describe("a turn's report stream", () => {
  it("hands a reply, tool calls and usage that came together over as one group, to be written in one commit", async () => {
    const { groups } = await run([line(reply) + line(call) + line(usage) + line(end)]);
    expect(groups).toEqual([["reply", "tool-call", "usage"]]);
  });

  it("keeps reports that came apart, and every other durable report, in groups of their own, in order", async () => {
    const { groups } = await run([line(reply), line(usage) + line(call) + line(result) + line(reply) + line(usage), line(end)]);
    expect(groups).toEqual([["reply"], ["usage", "tool-call"], ["tool-result"], ["reply", "usage"]]);
  });

  it("reads the stream to its close after the end, so the engines binding's connection carries the next turn", async () => {
    const { readToClose } = await run([line(reply) + line(usage) + line(end)]);
    expect(readToClose).toBe(true);
  });
});
