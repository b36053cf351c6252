import { describe, expect, it } from "vitest";
import { call, events } from "../support/http.js";
import { useFront } from "../support/use-front.js";

// The default configuration: no curator model, the default forced-window deadline (10 s).
const front = useFront();

/** A message of `words` words (about 1.35 tokens a word as the simulator counts), which the simulator echoes back. */
const message = (n: number, words: number) => `message ${n}: ${Array.from({ length: words }, (_, i) => `w${n}x${i}`).join(" ")}`;

/** The front's log lines for one thread's turns: outcome and duration of each run on its engine. */
function turnLines(output: string, threadId: string): { msg: string; outcome: string; durationMs: number }[] {
  return output
    .split("\n")
    .filter((l) => l.includes(`thread=${threadId} `) && / turn=/.test(l))
    .map((l) => ({ msg: /^agent-runtime: \w+ (.*?) thread=/.exec(l)![1]!, outcome: /outcome=(\S+)/.exec(l)![1]!, durationMs: Number(/durationMs=(\d+)/.exec(l)![1]) }));
}

async function longThread(spec: Record<string, unknown>, words: number): Promise<string> {
  const base = front().url;
  const spawned = await call(base, "POST", "/spawn", { ...spec, permissions: "allow" });
  expect(spawned.status).toBe(201);
  const id = spawned.body.threadId as string;
  for (let n = 1; n <= 24; n++) {
    const r = await call(base, "POST", `/threads/${id}/send`, { text: message(n, words) });
    expect(r.body.outcome, `${words} words, turn ${n}: ${JSON.stringify(r.body.failure)}`).toBe("completed");
  }
  return id;
}

// A thread whose messages alone fill the window in a few turns: no tool output to stub, no
// step to collapse. Each turn must still complete, and none waits for a caller's choice
// that could change nothing.
describe.each([
  ["pi", { model: "sim-8k" }],
  ["engine_b", { engine: "engine_b", model: "sim-8k" }],
  ["engine_a", { model: "claude-sim-8k" }],
])("24 turns of long messages on an 8,192-token window, in the default configuration (%s)", (engine, spec) => {
  it("complete every turn, 600-word and 900-word messages alike, each full window reduced at once", async () => {
    const ids = await Promise.all([longThread(spec, 600), longThread(spec, 900)]);
    for (const id of ids) {
      const log = await events(front().url, id);
      expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
      const forced = log.filter((e) => e.kind === "window-pending" && e.body.forced);
      const windows = log.filter((e) => e.kind === "window");
      // The window filled and was reduced (an engine's own summary at the warning line may keep it from forcing).
      expect(windows.length).toBeGreaterThan(0);
      if (engine !== "engine_a") expect(forced.length).toBeGreaterThan(0);
      // No mode a caller could pick would have made room on its own: no forced window waited.
      expect(forced.filter((e) => e.body.deadlineMs !== 0)).toEqual([]);
      const dispositions = log.filter((e) => e.kind === "compaction-disposition").map((e) => e.body);
      expect(dispositions.length).toBe(forced.length);
      expect(dispositions.filter((d) => d.settledBy !== "at-once")).toEqual([]);
      // Where no summary made room, the oldest turns left whole, said in the line after it naming their seqs.
      for (const drop of windows.filter((w) => w.body.kind === "drop")) {
        expect(drop.body.summaryModel).toBeUndefined();
        expect(log.find((e) => e.seq === drop.seq + 1)!.body.text).toMatch(/^the oldest turns left the context to make room \(events [\d, -]+; /);
      }
      if (engine === "pi") expect(windows.some((w) => w.body.kind === "summary" && w.body.summaryModel === "sim-8k" || w.body.kind === "drop")).toBe(true);
      // The front's log: every run of the thread's turns ended completed (a run the provider refused
      // as too long is said as window-full, and its turn's line follows), none as failed.
      const lines = turnLines(front().output(), id);
      expect(lines.filter((l) => l.outcome === "completed" && l.msg === "turn ended").length).toBeGreaterThanOrEqual(24);
      expect(lines.filter((l) => l.outcome !== "completed" && l.outcome !== "window-full")).toEqual([]);
    }
  }, 300_000);
});

describe("the curator in the default configuration", () => {
  it("is an engine_a thread's own claude-* model, called on its Anthropic route: a summary handoff it wrote", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "claude-sim", permissions: "allow" })).body.threadId as string;
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "the history before the handoff" })).body.outcome).toBe("completed");
    await call(base, "POST", `/threads/${id}/seats`, { name: "next", model: "claude-sim" });
    const fromSeq = (await call(base, "POST", `/threads/${id}/handoff`, { to: "next", context: "summary" })).body.fromSeq as number;
    const accepted = await call(base, "POST", `/threads/${id}/handoffs/${fromSeq}/accept`);
    expect(accepted.body.state, JSON.stringify(accepted.body)).toBe("accepted");
    const event = (await events(base, id)).find((e) => e.kind === "handoff-accepted")!;
    expect(event.body).toMatchObject({ fromSeq, summaryModel: "claude-sim", summary: expect.any(String) });
    // The curator's call offers no tools; the agent's own calls always do.
    const { requests } = (await (await fetch(`${front().simulatorUrl}/_sim/requests`)).json()) as { requests: { protocol: string; model: string | null; body: { tools?: unknown } }[] };
    expect(requests.filter((r) => r.model === "claude-sim" && r.body.tools === undefined).map((r) => r.protocol)).toEqual(["anthropic-messages"]);
  });
});
