import { plainText, UI_LIMITS, UI_STATE_LIMITS, type UiNode, type UiState } from "../api/ui.js";

type Tone = "neutral" | "info" | "success" | "warning" | "error";

const STAGE_TONE: Record<string, Tone> = { idle: "neutral", running: "info", waiting: "warning", degraded: "error", finished: "success" };

/** Rows of the seats' table: a thread with more shows the first ones. */
const SEAT_ROWS = 20;

/** Dollars with four decimals, tokens with thousands separators: the same text on every host (no locale). */
function usd(n: number): string {
  return `$${n.toFixed(4)}`;
}
function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** An id a button can carry as it is: what the approval and question routes take. */
function usableId(id: string): boolean {
  return id !== "" && plainText(id, UI_LIMITS.id) === id;
}

/** A string of the state as the tree holds it: plain, and cut to its limit, scaled down while the tree is too big. */
type Cut = (text: string, limit: number) => string;

function section(title: string, children: UiNode[]): UiNode {
  return { type: "stack", children: [{ type: "heading", text: title, level: 2 }, ...children] };
}

function approval(a: UiState["approvals"][number], cut: Cut): UiNode {
  const input = cut(a.input, UI_STATE_LIMITS.input);
  return {
    type: "stack",
    children: [
      { type: "text", text: `${cut(a.tool, UI_STATE_LIMITS.title)} asks to run with:` },
      ...(input !== "" ? [{ type: "code" as const, text: input, language: "json" }] : []),
      {
        type: "row",
        children: [
          { type: "button", label: "Allow", style: "primary", action: { name: "approve", approvalId: a.approvalId, decision: "allow" } },
          { type: "button", label: "Deny", style: "danger", action: { name: "approve", approvalId: a.approvalId, decision: "deny" } },
        ],
      },
    ],
  };
}

function question(q: UiState["questions"][number], cut: Cut): UiNode {
  const text = cut(q.question, UI_STATE_LIMITS.excerpt);
  return {
    type: "stack",
    children: [
      ...(text !== "" ? [{ type: "text" as const, text }] : []),
      {
        type: "row",
        children: [
          { type: "button", label: "Answer", style: "primary", action: { name: "answer", requestId: q.requestId } },
          { type: "button", label: "Dismiss", style: "secondary", action: { name: "dismiss", requestId: q.requestId } },
        ],
      },
    ],
  };
}

function build(state: UiState, cut: Cut): UiNode {
  const t = state.thread;
  /** A table cell: one line. */
  const cell = (text: string) => cut(text.replace(/\s+/g, " ").trim(), UI_LIMITS.cell);
  const children: UiNode[] = [
    { type: "row", children: [{ type: "heading", text: cut(t.title ?? "", UI_STATE_LIMITS.title) || `Thread ${cut(t.id, UI_LIMITS.id)}`, level: 1 }, { type: "badge", text: plainText(t.stage, UI_LIMITS.label) || "unknown", tone: STAGE_TONE[t.stage] ?? "neutral" }] },
    {
      type: "keyValue",
      items: [
        { key: "Engine", value: cut(`${t.engine} · ${t.model}`, UI_LIMITS.item) },
        { key: "Kind", value: cut(`${t.type} · ${t.role}`, UI_LIMITS.item) },
        ...(t.workspace ? [{ key: "Workspace", value: cut(t.workspace, UI_LIMITS.item) }] : []),
        { key: "Turns", value: String(t.turns) },
        { key: "Cost", value: `${usd(t.cost.usd)} (${count(t.cost.inputTokens)} in, ${count(t.cost.outputTokens)} out tokens)` },
        { key: "Updated", value: cut(t.updatedAt, UI_LIMITS.item) },
      ],
    },
  ];
  const approvals = state.approvals.filter((a) => usableId(a.approvalId)).slice(0, UI_STATE_LIMITS.open);
  const questions = state.questions.filter((q) => usableId(q.requestId)).slice(0, UI_STATE_LIMITS.open);
  if (approvals.length > 0) children.push(section("Waiting for approval", approvals.map((a) => approval(a, cut))));
  if (questions.length > 0) children.push(section("Questions", questions.map((q) => question(q, cut))));
  if (state.failure) children.push({ type: "text", tone: "error", text: `The last turn failed (${cut(state.failure.class, UI_LIMITS.label)}): ${cut(state.failure.error, UI_STATE_LIMITS.error)}` });
  const said = cut(state.lastMessage?.text ?? "", UI_STATE_LIMITS.excerpt);
  const from = cut(state.lastMessage?.from ?? "", UI_STATE_LIMITS.title);
  if (said) children.push(section(from ? `Last message, from ${from}` : "Last message", [{ type: "text", text: said }]));
  const replied = cut(state.lastReply?.text ?? "", UI_STATE_LIMITS.excerpt);
  if (replied) children.push(section("Last reply", [{ type: "text", text: replied }]));
  const calls = state.toolCalls.slice(-UI_STATE_LIMITS.toolCalls);
  if (calls.length > 0)
    children.push(section("Recent tool calls", [{ type: "table", columns: ["Tool", "Input", "Result"], rows: calls.map((c) => [cell(c.name), cell(c.input), cell(c.result)]) }]));
  if (state.seats.length > 1)
    children.push(
      section("Seats", [
        {
          type: "table",
          columns: ["Seat", "Engine", "Model", "Role", "State"],
          rows: state.seats.slice(0, SEAT_ROWS).map((s) => [cell(s.holds ? `${s.name} (holds)` : s.name), cell(s.engine), cell(s.model), cell(s.role ?? ""), cell(s.state)]),
        },
      ]),
    );
  const actions: UiNode[] = [];
  if (t.stage === "running" || t.stage === "waiting") actions.push({ type: "button", label: "Interrupt", style: "danger", action: { name: "interrupt" } });
  actions.push({ type: "button", label: "Refresh", style: "secondary", action: { name: "generate" } });
  children.push({ type: "row", children: actions });
  return { type: "stack", children };
}

const bytesOf = (tree: UiNode) => new TextEncoder().encode(JSON.stringify(tree)).length;

/**
 * The interface a thread gets with no model: what a person following it wants first.
 * Who it is and where it stands; what it waits on, with the buttons that answer it; how
 * the last turn failed; the last message and reply; the recent tool calls; its seats when
 * it has more than one; and what can be done now. Deterministic: the same state gives
 * the same tree. Every tree it gives is one the catalog takes, whatever the state holds
 * (test/unit/ui-template.test.ts): each string is made plain and cut to its limit, and
 * while the whole is over the catalog's size the limits are halved.
 */
export function templateTree(state: UiState): UiNode {
  for (let scale = 1; ; scale /= 2) {
    const tree = build(state, (text, limit) => plainText(text, Math.max(16, Math.floor(limit * scale))));
    if (bytesOf(tree) <= UI_LIMITS.bytes || scale < 1 / 64) return tree;
  }
}
