import { describe, expect, it } from "vitest";
import type { WindowBody } from "../../src/api/compaction.js";
import type { TranscriptEntry } from "../../src/api/engine.js";
import {
  applyWindows,
  DEFAULT_WINDOW_SETTINGS,
  dropEntry,
  estimateEntries,
  linesOf,
  planCollapse,
  planDrop,
  planMicrocompact,
  planSummary,
  rangesOf,
  savingOf,
  thrashes,
  type HeldEntry,
} from "../../src/rules/compaction.js";

const S = DEFAULT_WINDOW_SETTINGS;
const big = (n: number) => "x".repeat(n);

/** A transcript of `turns` turns, each a user message, `tools` tool calls with their results, and a final reply. */
function transcript(turns: number, tools: number, output = big(800)): HeldEntry[] {
  const out: HeldEntry[] = [];
  let seq = 10;
  for (let t = 1; t <= turns; t++) {
    out.push({ seq: seq++, entry: { role: "user", text: `instruction ${t}: keep this verbatim` } });
    seq++; // turn-started
    for (let i = 1; i <= tools; i++) {
      const callId = `c${t}.${i}`;
      out.push({ seq: seq++, entry: { role: "tool-call", callId, name: "shell", input: { command: `step ${i}` } } });
      seq++; // approval and the like: not in the transcript
      out.push({ seq: seq++, entry: { role: "tool-result", callId, name: "shell", output, isError: false } });
    }
    out.push({ seq: seq++, entry: { role: "assistant", text: `done with turn ${t}` } });
    seq += 2; // usage, turn-ended
  }
  return out;
}

const roles = (view: HeldEntry[]) => view.map((h) => h.entry.role);
const window = (kind: WindowBody["kind"], view: HeldEntry[], cut: Set<number>, extra: Partial<WindowBody> = {}): WindowBody => ({
  kind,
  cut: rangesOf(view, cut),
  tokensBefore: 0,
  tokensAfter: 0,
  trigger: "request",
  ...extra,
});

/** Every tool call has its result and every result its call. */
function matched(view: HeldEntry[]): boolean {
  const calls = view.flatMap((h) => (h.entry.role === "tool-call" ? [h.entry.callId] : []));
  const results = view.flatMap((h) => (h.entry.role === "tool-result" ? [h.entry.callId] : []));
  return calls.length === results.length && calls.every((c) => results.includes(c));
}

describe("the lines", () => {
  it("warns past the share of the window and forces when the reserve for the answer is gone", () => {
    expect(linesOf(8192, S)).toEqual({ window: 8192, warnAt: 5734, forcedAt: 8192 - 1024 });
    // A small window keeps at most a quarter for the answer.
    expect(linesOf(2000, S).forcedAt).toBe(1500);
  });
});

describe("microcompact", () => {
  it("stubs every older tool result, keeps the newest whole, and keeps the calls and results matched", () => {
    const view = transcript(2, 3);
    const cut = planMicrocompact(view, S);
    expect(cut.size).toBe(3);
    const after = applyWindows(view, [window("microcompact", view, cut)]);
    expect(roles(after)).toEqual(roles(view));
    const outputs = after.flatMap((h) => (h.entry.role === "tool-result" ? [h.entry.output] : []));
    expect(outputs.slice(0, 3).every((o) => o.startsWith("[tool output of 800 characters removed"))).toBe(true);
    expect(outputs.slice(3)).toEqual([big(800), big(800), big(800)]);
    expect(estimateEntries(after)).toBe(estimateEntries(view) - savingOf("microcompact", view, cut));
  });

  it("leaves short outputs alone: a stub would not be shorter", () => {
    expect(planMicrocompact(transcript(3, 3, "ok"), S).size).toBe(0);
  });

  it("does not stub a stub again", () => {
    const view = transcript(2, 3);
    const once = applyWindows(view, [window("microcompact", view, planMicrocompact(view, S))]);
    expect(planMicrocompact(once, S).size).toBe(0);
  });
});

describe("collapse", () => {
  it("keeps every user message and each older turn's final reply, cuts the tool pairs together, and leaves the newest turns whole", () => {
    const view = transcript(4, 2);
    const after = applyWindows(view, [window("collapse", view, planCollapse(view, S))]);
    expect(roles(after.slice(0, 4))).toEqual(["user", "assistant", "user", "assistant"]);
    expect(after.slice(4)).toEqual(view.slice(view.length - 2 * 6));
    expect(after.filter((h) => h.entry.role === "user")).toEqual(view.filter((h) => h.entry.role === "user"));
    expect(matched(after)).toBe(true);
  });

  it("cuts nothing when the thread has no more turns than it keeps", () => {
    expect(planCollapse(transcript(2, 3), S).size).toBe(0);
  });
});

describe("summary", () => {
  it("cuts everything before the kept turns but the newest user messages within the budget, and puts the summary where the cut began", () => {
    const view = transcript(5, 1);
    const cut = planSummary(view, { ...S, userBudgetTokens: 24 });
    const after = applyWindows(view, [window("summary", view, cut, { summary: "they asked for three things" })]);
    const users = after.filter((h) => h.entry.role === "user").map((h) => (h.entry as { text: string }).text);
    expect(users[0]).toMatch(/^\[Summary of the conversation from event 10 to event \d+/);
    expect(users).toContain("instruction 3: keep this verbatim");
    expect(users).not.toContain("instruction 1: keep this verbatim");
    expect(users.slice(-2)).toEqual(["instruction 4: keep this verbatim", "instruction 5: keep this verbatim"]);
    expect(matched(after)).toBe(true);
  });
});

describe("ranges", () => {
  it("never spans an entry that stays, even when the transcript's order is not the seqs' order", () => {
    // A message queued behind a running turn has a lower seq than that turn's results.
    const view: HeldEntry[] = [
      { seq: 1, entry: { role: "user", text: "first" } },
      { seq: 3, entry: { role: "tool-call", callId: "a", name: "shell", input: {} } },
      { seq: 5, entry: { role: "tool-result", callId: "a", name: "shell", output: "r", isError: false } },
      { seq: 6, entry: { role: "assistant", text: "done" } },
      { seq: 4, entry: { role: "user", text: "queued while the turn ran" } },
    ];
    expect(rangesOf(view, new Set([3, 5]))).toEqual([
      [3, 3],
      [5, 5],
    ]);
    const after = applyWindows(view, [window("collapse", view, new Set([3, 5]))]);
    expect(after.map((h) => h.seq)).toEqual([1, 6, 4]);
  });
});

describe("a row added after a reduction", () => {
  it("is never cut by it, though its seq lies inside a cut range", () => {
    // A collapse cut seqs 3 to 5 while a message with seq 4 waited in the inbox; the message joins the transcript after.
    const before: HeldEntry[] = [
      { seq: 1, row: 1, entry: { role: "user", text: "first" } },
      { seq: 3, row: 2, entry: { role: "tool-call", callId: "a", name: "shell", input: {} } },
      { seq: 5, row: 3, entry: { role: "tool-result", callId: "a", name: "shell", output: "r", isError: false } },
      { seq: 6, row: 4, entry: { role: "assistant", text: "done" } },
    ];
    const w = { ...window("collapse", before, new Set([3, 5])), upToRow: 4 };
    expect(w.cut).toEqual([[3, 5]]);
    const queued: HeldEntry = { seq: 4, row: 5, entry: { role: "user", text: "queued while the turn ran" } };
    expect(applyWindows([...before, queued], [w]).map((h) => h.seq)).toEqual([1, 6, 4]);
  });
});

describe("a window applied to a fork's history", () => {
  it("is applied only to what it cut: entries after it are whole", () => {
    const view = transcript(3, 2);
    const w = window("microcompact", view, planMicrocompact(view, { ...S, keepToolResults: 0 }));
    const later: TranscriptEntry = { role: "tool-result", callId: "late", name: "shell", output: big(800), isError: false };
    const after = applyWindows([...view, { seq: 999, entry: later }], [w]);
    expect(after.at(-1)!.entry).toEqual(later);
  });
});

describe("WindowThrash", () => {
  it("refuses once the limit of reductions ran within the last turns, and forgets older ones", () => {
    expect(thrashes([5, 5, 6], 6, S)).toBe(false);
    expect(thrashes([5, 5, 6, 6], 6, S)).toBe(true);
    expect(thrashes([3, 3, 4, 4], 6, S)).toBe(false);
  });
});

describe("the last resort: a drop of the oldest turns", () => {
  const view = transcript(4, 1, big(400));
  const turnSeqs = (t: number) => {
    const starts = view.flatMap((h, i) => (h.entry.role === "user" ? [i] : []));
    return view.slice(starts[t - 1], starts[t] ?? view.length).map((h) => h.seq);
  };

  it("takes whole turns, oldest first, until the excess is gone", () => {
    const one = estimateEntries(view.filter((h) => turnSeqs(1).includes(h.seq)));
    expect([...planDrop(view, 1)]).toEqual(turnSeqs(1));
    expect([...planDrop(view, one)]).toEqual(turnSeqs(1));
    expect([...planDrop(view, one + 1)]).toEqual([...turnSeqs(1), ...turnSeqs(2)]);
    expect([...planDrop(view, 1_000_000)]).toEqual([1, 2, 3, 4].flatMap(turnSeqs));
  });

  it("keeps everything from the row it is told to, and cuts nothing with no excess", () => {
    const rowed = view.map((h, i) => ({ ...h, row: i + 1 }));
    const fourth = rowed.find((h) => h.seq === turnSeqs(4)[0])!.row;
    expect([...planDrop(rowed, 1_000_000, fourth)]).toEqual([1, 2, 3].flatMap(turnSeqs));
    expect(planDrop(rowed, 1_000_000, 1).size).toBe(0);
    expect(planDrop(view, 0).size).toBe(0);
  });

  it("in a recovery, keeps a steered turn from its first input on, not only from the steer", () => {
    const older = transcript(2, 1, big(400));
    let seq = older.at(-1)!.seq + 10;
    const running: HeldEntry[] = [
      { seq: seq++, entry: { role: "user", text: "the task the running turn answers" } },
      { seq: seq++, entry: { role: "tool-call", callId: "r.1", name: "shell", input: { command: "step 1" } } },
      { seq: seq++, entry: { role: "tool-result", callId: "r.1", name: "shell", output: big(400), isError: false } },
      { seq: seq++, entry: { role: "user", text: "a steer, joined after the tool result" } },
    ];
    const rowed = [...older, ...running].map((h, i) => ({ ...h, row: i + 1 }));
    const first = rowed[older.length]!.row;
    const cut = planDrop(rowed, 1_000_000, first);
    expect(rowed.filter((h) => !cut.has(h.seq)).map((h) => h.seq)).toEqual(running.map((h) => h.seq));
    // Control: the older turns go whole.
    expect([...cut]).toEqual(older.map((h) => h.seq));
  });

  it("in a recovery, counts an earlier drop's notice before the running turn as nothing to cut", () => {
    const notice: HeldEntry = { seq: 1, entry: dropEntry([[1, 20]]) };
    const running: HeldEntry = { seq: 21, entry: { role: "user", text: big(40_000) }, row: 21 };
    expect(planDrop([notice, running], 1_000_000, 21).size).toBe(0);
    // Control: a real turn beside the notice goes, and the notice with it (the new notice folds it in).
    const turn: HeldEntry[] = [
      { seq: 22, entry: { role: "user", text: "an older question" }, row: 22 },
      { seq: 23, entry: { role: "assistant", text: "its answer" }, row: 23 },
    ];
    const later: HeldEntry = { ...running, seq: 24, row: 24 };
    expect([...planDrop([notice, ...turn, later], 1_000_000, 24)]).toEqual([1, 22, 23]);
  });

  it("leaves a notice naming the cut seqs where the turns were, and saves their tokens less the notice", () => {
    const cut = planDrop(view, 1);
    const ranges = rangesOf(view, cut);
    const drop: WindowBody = { kind: "drop", cut: ranges, tokensBefore: 0, tokensAfter: 0, trigger: "line", summaryFailed: "no model answered" };
    const after = applyWindows(view, [drop]);
    expect(after[0]!.entry).toEqual(dropEntry(ranges));
    expect((after[0]!.entry as { text: string }).text).toContain(`events ${ranges[0]![0]}-${ranges[0]![1]}`);
    expect(after.slice(1)).toEqual(view.filter((h) => !cut.has(h.seq)));
    const notice = estimateEntries([after[0]!]);
    expect(savingOf("drop", view, cut, notice)).toBe(estimateEntries(view.filter((h) => cut.has(h.seq))) - notice);
  });

  it("takes an earlier drop's notice with the turn after it, so notices never pile up", () => {
    const first = rangesOf(view, planDrop(view, 1));
    const once = applyWindows(view, [{ kind: "drop", cut: first, tokensBefore: 0, tokensAfter: 0, trigger: "line" }]);
    const second = rangesOf(once, planDrop(once, 1));
    const twice = applyWindows(view, [
      { kind: "drop", cut: first, tokensBefore: 0, tokensAfter: 0, trigger: "line" },
      { kind: "drop", cut: second, tokensBefore: 0, tokensAfter: 0, trigger: "line" },
    ]);
    expect(twice.filter((h) => h.entry.role === "user" && h.entry.text.startsWith("[Earlier conversation")).length).toBe(1);
    expect(twice.filter((h) => h.entry.role === "user").length).toBe(3);
  });
});
