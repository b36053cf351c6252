import { ApprovalPayload, QuestionPayload, type ResumeEntry, type RunAgentInput } from "../api/agui.js";
import type { ApprovalDecision, QuestionAction } from "../api/engine.js";
import { CODES } from "../api/errors.js";
import { refuse, type Refusal } from "../api/outcome.js";

/** A user message an AG-UI run brings: the client's id and its text. */
export interface NewMessage {
  id: string;
  text: string;
}

export type ResumeAnswer =
  | { kind: "approval"; id: string; decision: ApprovalDecision }
  | { kind: "question"; id: string; action: QuestionAction; answer?: string };

/**
 * The messages of a run that are new to the thread: `HttpAgent` sends the whole
 * conversation it holds, and what the person just wrote is the user messages after its
 * last message of any other role. (Each is posted once by its id, so a client that
 * sends one again writes nothing.)
 */
export function newUserMessages(messages: RunAgentInput["messages"]): NewMessage[] | Refusal {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === "user") start--;
  const out: NewMessage[] = [];
  for (const m of messages.slice(start)) {
    const text = textOf(m.content);
    if (!text.trim())
      return refuse(400, `message ${m.id} has no text: this route takes text (attachments go through POST /threads/:id/messages)`, CODES.aguiMessageUnsupported);
    out.push({ id: m.id, text });
  }
  return out;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p): p is { type: "text"; text: string } => typeof p === "object" && p !== null && p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n");
}

/**
 * What each `resume` entry does to the interrupt it names: an approval is allowed or
 * denied (cancelled: denied), a question answered, dismissed or continued (cancelled:
 * dismissed). An entry naming an interrupt closed since (answered by someone else, or its
 * turn ended: the official client keeps an interrupt until a run finishes, which a failed
 * run never does) is passed over, so a client can go on with a new message. An entry
 * naming none of the thread's, or with a payload its interrupt does not take, refuses the
 * whole run before anything is written.
 */
export function resumeAnswers(entries: readonly ResumeEntry[], named: readonly { id: string; kind: "approval" | "question"; open: boolean }[]): ResumeAnswer[] | Refusal {
  const waits = new Map(named.map((w) => [w.id, w]));
  const out: ResumeAnswer[] = [];
  for (const entry of entries) {
    const wait = waits.get(entry.interruptId);
    if (!wait) return refuse(409, `interrupt ${entry.interruptId} is not one of this thread's approvals or questions`, CODES.aguiInterruptClosed, { interruptId: entry.interruptId });
    // Closed already (answered elsewhere, or its turn ended): the client's copy is stale, and its answer moot.
    if (!wait.open) continue;
    const kind = wait.kind;
    if (kind === "approval") {
      if (entry.status === "cancelled") {
        out.push({ kind, id: entry.interruptId, decision: "deny" });
        continue;
      }
      const p = ApprovalPayload.safeParse(entry.payload);
      if (!p.success) return refuse(400, `interrupt ${entry.interruptId} is an approval: payload must be { decision: "allow" | "deny" }`, CODES.aguiResumeInvalid);
      out.push({ kind, id: entry.interruptId, decision: p.data.decision });
      continue;
    }
    if (entry.status === "cancelled") {
      out.push({ kind, id: entry.interruptId, action: "dismiss" });
      continue;
    }
    const p = QuestionPayload.safeParse(entry.payload);
    if (!p.success)
      return refuse(400, `interrupt ${entry.interruptId} is a question: payload must be { answer } or { action: "dismiss" | "continue" }`, CODES.aguiResumeInvalid);
    out.push("answer" in p.data ? { kind, id: entry.interruptId, action: "answer", answer: p.data.answer } : { kind, id: entry.interruptId, action: p.data.action });
  }
  return out;
}
