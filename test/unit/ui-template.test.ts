import { describe, expect, it } from "vitest";
import type { UiNode, UiState } from "../../src/api/ui.js";
import { templateTree } from "../../src/rules/ui-template.js";
import { checkUiTree } from "../../src/rules/ui-tree.js";

const IDLE: UiState = {
  thread: {
    id: "thr_01",
    title: "Fix the flaky login test",
    type: "chat",
    role: "chat",
    workspace: "acme",
    engine: "pi",
    model: "sim-1",
    stage: "idle",
    turns: 2,
    cost: { usd: 0.00123, inputTokens: 12345, outputTokens: 678 },
    createdAt: "2026-11-27T10:00:00.000Z",
    updatedAt: "2026-11-27T10:05:00.000Z",
  },
  approvals: [],
  questions: [],
  lastMessage: { seq: 6, text: "Now run the tests.", from: null },
  lastReply: { seq: 9, text: "All 42 tests pass." },
  toolCalls: [{ seq: 7, name: "shell", input: '{"command":"npm test"}', result: "ok" }],
  failure: null,
  seats: [{ name: "main", engine: "pi", model: "sim-1", role: null, state: "active", holds: true }],
  basedOnSeq: 10,
};

const WAITING: UiState = {
  ...IDLE,
  thread: { ...IDLE.thread, stage: "waiting" },
  approvals: [{ approvalId: "appr_1", tool: "shell", input: '{\n  "command": "rm -rf build"\n}' }],
  questions: [{ requestId: "q_1", question: "Which branch?" }],
};

/** Every node of the tree, depth first. */
function nodes(tree: UiNode): UiNode[] {
  return [tree, ...(tree.type === "stack" || tree.type === "row" ? tree.children.flatMap(nodes) : [])];
}
const buttons = (tree: UiNode) => nodes(tree).flatMap((n) => (n.type === "button" ? [n] : []));
const texts = (tree: UiNode) => nodes(tree).flatMap((n) => ("text" in n ? [n.text] : []));

describe("the interface template", () => {
  it("shows who the thread is and where it stands: title, stage, engine and model, cost, last message and reply, tool calls", () => {
    const tree = templateTree(IDLE);
    expect(checkUiTree(tree).ok).toBe(true);
    expect(texts(tree)).toEqual(expect.arrayContaining(["Fix the flaky login test", "idle", "Now run the tests.", "All 42 tests pass.", "Last reply", "Recent tool calls"]));
    const facts = nodes(tree).find((n) => n.type === "keyValue");
    expect(facts).toMatchObject({ items: expect.arrayContaining([{ key: "Engine", value: "pi · sim-1" }, { key: "Cost", value: "$0.0012 (12,345 in, 678 out tokens)" }, { key: "Workspace", value: "acme" }]) });
    expect(nodes(tree).find((n) => n.type === "table")).toMatchObject({ rows: [["shell", '{"command":"npm test"}', "ok"]] });
    // Nothing to interrupt on an idle thread; one seat needs no table of seats.
    expect(buttons(tree).map((b) => b.action)).toEqual([{ name: "generate" }]);
    expect(texts(tree)).not.toContain("Seats");
  });

  it("puts what waits on a person first, with the buttons that answer it", () => {
    const tree = templateTree(WAITING);
    expect(checkUiTree(tree).ok).toBe(true);
    expect(buttons(tree).map((b) => b.action)).toEqual([
      { name: "approve", approvalId: "appr_1", decision: "allow" },
      { name: "approve", approvalId: "appr_1", decision: "deny" },
      { name: "answer", requestId: "q_1" },
      { name: "dismiss", requestId: "q_1" },
      { name: "interrupt" },
      { name: "generate" },
    ]);
    const order = texts(tree);
    expect(order.indexOf("Waiting for approval")).toBeLessThan(order.indexOf("Last message"));
    expect(nodes(tree).find((n) => n.type === "code")).toMatchObject({ text: '{\n  "command": "rm -rf build"\n}' });
  });

  it("says how the last turn failed, and lists the seats of a thread with several", () => {
    const tree = templateTree({
      ...IDLE,
      failure: { seq: 9, class: "rate-limited", error: "the provider refused: 429" },
      seats: [...IDLE.seats, { name: "reviewer", engine: "engine_a", model: "claude-sim", role: "reviewer", state: "active", holds: false }],
    });
    expect(checkUiTree(tree).ok).toBe(true);
    expect(nodes(tree)).toContainEqual({ type: "text", tone: "error", text: "The last turn failed (rate-limited): the provider refused: 429" });
    expect(nodes(tree).filter((n) => n.type === "table")[1]).toMatchObject({ rows: [["main (holds)", "pi", "sim-1", "", "active"], ["reviewer", "engine_a", "claude-sim", "reviewer", "active"]] });
  });

  it("is the same tree for the same state", () => {
    expect(JSON.stringify(templateTree(structuredClone(WAITING)))).toBe(JSON.stringify(templateTree(WAITING)));
  });

  it("gives a tree the catalog takes whatever the state holds: no title, nothing said, markup, escapes, overlong text, too many of everything", () => {
    const long = "x".repeat(20_000);
    // Four bytes of UTF-8 each, and escapes JSON doubles: the size limit is in bytes.
    const wide = "\ud83d\ude00\\\"".repeat(5_000);
    const hostile: UiState = {
      thread: { ...IDLE.thread, title: `\u001b[31m${long}`, stage: "running", workspace: null },
      approvals: Array.from({ length: 30 }, (_, i) => ({ approvalId: `appr_${i}`, tool: `<script>${long}`, input: wide })).concat([{ approvalId: "x".repeat(500), tool: "t", input: "" }]),
      questions: Array.from({ length: 30 }, (_, i) => ({ requestId: `q_${i}`, question: i % 2 ? "" : `\u202E${wide}\ud800` })),
      lastMessage: { seq: 1, text: "\u0007", from: long },
      lastReply: { seq: 2, text: `<img src=x onerror=alert(1)>${long}` },
      toolCalls: Array.from({ length: 30 }, (_, i) => ({ seq: i, name: long, input: `\n\t${long}`, result: "pending" as const })),
      failure: { seq: 3, class: "server", error: long },
      seats: Array.from({ length: 80 }, (_, i) => ({ name: `s${i}${long}`, engine: "pi", model: long, role: long, state: "active", holds: i === 0 })),
      basedOnSeq: 99,
    };
    const tree = templateTree(hostile);
    const checked = checkUiTree(tree);
    expect(checked.ok, checked.ok ? "" : checked.body.error).toBe(true);
    // An id too long to be an approval's is no button: a button must name it whole.
    expect(buttons(tree).some((b) => b.action.name === "approve" && b.action.approvalId.length > 100)).toBe(false);
    const untitled = templateTree({ ...IDLE, thread: { ...IDLE.thread, title: null }, lastMessage: null, lastReply: null, toolCalls: [] });
    expect(checkUiTree(untitled).ok).toBe(true);
    expect(texts(untitled)).toContain("Thread thr_01");
  });
});
