import { UI_RETRY, UI_STATE_LABEL } from "../../src/api/curator-prompts.js";
import type { UiNode, UiState } from "../../src/api/ui.js";
import { BadRequest } from "./errors.js";

/**
 * A thread's last message may script its interface request with a line of its own:
 * `@sim-ui invalid` (every answer is a tree the catalog refuses) or `@sim-ui invalid-once`
 * (the first answer is; the runtime's retry gets a valid one). Not a `@sim` directive:
 * the thread's turns echo it as text.
 */
const SCRIPT = /^\s*@sim-ui\s+(invalid-once|invalid)\s*$/m;

/** What models are known to add and the catalog refuses: a link whose target is a script. */
const REFUSED: unknown = { type: "link", text: "Open the thread", href: "javascript:alert(document.cookie)" };

/** The state the request carries: the JSON line after `UI_STATE_LABEL` in its system prompt. */
function stateOf(system: string): UiState {
  const at = system.indexOf(UI_STATE_LABEL);
  if (at === -1) throw new BadRequest("an interface request without the thread's state");
  return JSON.parse(system.slice(at + UI_STATE_LABEL.length).trim()) as UiState;
}

/** The tree a model would write for the state: where the thread stands, what waits on a person, its last reply. */
function treeOf(s: UiState): UiNode {
  const children: UiNode[] = [
    { type: "row", children: [{ type: "heading", text: s.thread.title || `Thread ${s.thread.id}`, level: 1 }, { type: "badge", text: s.thread.stage, tone: s.thread.stage === "waiting" ? "warning" : "neutral" }] },
  ];
  for (const a of s.approvals)
    children.push(
      { type: "text", text: `${a.tool} waits for your approval.`, tone: "warning" },
      {
        type: "row",
        children: [
          { type: "button", label: "Allow", style: "primary", action: { name: "approve", approvalId: a.approvalId, decision: "allow" } },
          { type: "button", label: "Deny", style: "danger", action: { name: "approve", approvalId: a.approvalId, decision: "deny" } },
        ],
      },
    );
  for (const q of s.questions)
    children.push({ type: "text", text: q.question || "The agent asks a question." }, { type: "button", label: "Answer", style: "primary", action: { name: "answer", requestId: q.requestId } });
  children.push({ type: "text", text: s.lastReply?.text || "No reply yet." });
  children.push({ type: "button", label: "Refresh", style: "secondary", action: { name: "generate" } });
  return { type: "stack", children };
}

/**
 * The answer to the runtime's interface request (`UI_PROMPT`): a tree derived from the
 * thread's state, as JSON, or, as the thread's last message scripts it, one the catalog
 * refuses. `asked` is the request's user message: a retry opens with `UI_RETRY`.
 */
export function interfaceAnswer(system: string, asked: string): string {
  const state = stateOf(system);
  const tree = treeOf(state);
  const script = SCRIPT.exec(state.lastMessage?.text ?? "")?.[1];
  const refused = script === "invalid" || (script === "invalid-once" && !asked.startsWith(UI_RETRY));
  return JSON.stringify(refused && tree.type === "stack" ? { ...tree, children: [...tree.children, REFUSED] } : tree);
}
