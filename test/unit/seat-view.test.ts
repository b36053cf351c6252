import { describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../../src/api/engine.js";
import type { HeldEntry } from "../../src/rules/compaction.js";
import { cleanCut, FOREIGN_TOOL_CHARS, seatField, seatInputs, seatView } from "../../src/rules/seat-view.js";

const held = (entries: TranscriptEntry[]): HeldEntry[] => entries.map((entry, i) => ({ seq: i + 2, entry, row: i + 1 }));

const oneSeat = held([
  { role: "user", text: "hi", from: "alice" },
  { role: "assistant", text: "hello" },
  { role: "tool-call", callId: "c1", name: "shell", input: { command: "ls" } },
  { role: "tool-result", callId: "c1", name: "shell", output: "a b", isError: false },
]);

describe("each seat's view of the shared transcript", () => {
  it("is the transcript unchanged while one seat took part, senders unlabelled", () => {
    const view = seatView(oneSeat, "main", null);
    expect(view.labelled).toBe(false);
    expect(view.entries).toEqual([
      { role: "user", text: "hi" },
      { role: "assistant", text: "hello" },
      { role: "tool-call", callId: "c1", name: "shell", input: { command: "ls" } },
      { role: "tool-result", callId: "c1", name: "shell", output: "a b", isError: false },
    ]);
  });

  it("shows another seat's words, calls and results as labelled text, and its own as they were", () => {
    const shared = [...oneSeat, ...held([{ role: "user", text: "review it" }, { role: "assistant", text: "looks fine", ...seatField("reviewer") }])];
    const main = seatView(shared, "main", null);
    expect(main.labelled).toBe(true);
    expect(main.entries.slice(0, 2)).toEqual([
      { role: "user", text: "[from alice]\nhi" },
      { role: "assistant", text: "hello" },
    ]);
    expect(main.entries.at(-1)).toEqual({ role: "assistant", text: "[seat reviewer]\nlooks fine" });
    const reviewer = seatView(shared, "reviewer", null);
    expect(reviewer.entries).toEqual([
      { role: "user", text: "[from alice]\nhi" },
      { role: "assistant", text: "[seat main]\nhello" },
      { role: "assistant", text: '[seat main called shell]\n{"command":"ls"}' },
      { role: "assistant", text: "[seat main: shell returned]\na b" },
      { role: "user", text: "review it" },
      { role: "assistant", text: "looks fine" },
    ]);
  });

  it("cuts another seat's long tool output, saying how much more there was", () => {
    const long = held([{ role: "tool-result", callId: "c", name: "cat", output: "x".repeat(FOREIGN_TOOL_CHARS + 10), isError: true, seat: "other" }]);
    const [entry] = seatView(long, "main", null).entries;
    expect(entry).toEqual({ role: "assistant", text: `[seat other: cat failed]\n${"x".repeat(FOREIGN_TOOL_CHARS)}… (10 more characters)` });
  });

  it("starts a seat that took the thread with a summary from the summary, then what came after it", () => {
    const view = seatView(oneSeat, "next", { row: 3, summary: "they listed files" });
    expect(view.entries).toEqual([
      { role: "user", text: "[summary of the conversation before seat next took the thread]\nthey listed files" },
      { role: "assistant", text: "[seat main: shell returned]\na b" },
    ]);
  });

  it("labels the turn's own messages with their senders only when the view is labelled", () => {
    const inputs = [{ seq: 9, text: "go", from: "bob" }, { seq: 10, text: "plain" }];
    expect(seatInputs(inputs, false)).toBe(inputs);
    expect(seatInputs(inputs, true).map((i) => i.text)).toEqual(["[from bob]\ngo", "plain"]);
  });
});

describe("where a summary handoff may cut the transcript", () => {
  it("moves back before a call whose result comes after the cut, or has not come", () => {
    const entries = held([
      { role: "user", text: "go" },
      { role: "tool-call", callId: "a", name: "shell", input: {} },
      { role: "tool-result", callId: "a", name: "shell", output: "", isError: false },
      { role: "tool-call", callId: "b", name: "shell", input: {} },
      { role: "tool-result", callId: "b", name: "shell", output: "", isError: false },
      { role: "tool-call", callId: "c", name: "shell", input: {} },
    ]);
    expect(cleanCut(entries, 3)).toBe(3);
    expect(cleanCut(entries, 4)).toBe(3);
    expect(cleanCut(entries, 5)).toBe(5);
    expect(cleanCut(entries, 6)).toBe(5);
    expect(cleanCut(entries, 2)).toBe(1);
  });
});
