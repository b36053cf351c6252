import { AGUI_SENDER, type RunAgentInput } from "../api/agui.js";
import { CODES } from "../api/errors.js";
import { fail, refused, valueOf } from "../http/answer.js";
import type { Env } from "../platform/env.js";
import { threadOf } from "../platform/stubs.js";
import { newUserMessages, resumeAnswers } from "../rules/agui-input.js";

/** Where a run's stream starts and the messages whose turn it waits for. */
export interface AguiRunStart {
  after: number;
  inputs: number[];
  /** The interrupts the resume entries answered. */
  answered: string[];
}

/**
 * `POST /threads/:id/agui` before its stream: checks the whole input first (every
 * resume entry names an open interrupt and carries what it takes; every new message has
 * text), then answers the interrupts and posts the messages. The stream starts at the
 * log's head before these writes, or at a message posted by an earlier run with the same
 * id, so sending a run again shows its turn again rather than waiting for one that ended.
 */
export async function startAguiRun(env: Env, threadId: string, input: RunAgentInput): Promise<AguiRunStart> {
  const stub = threadOf(env, threadId);
  const head = valueOf(await stub.get()).lastSeq;
  const resume = input.resume ?? [];
  const answers = resumeAnswers(resume, valueOf(await stub.waitsNamed(resume.map((r) => r.interruptId))));
  if (!Array.isArray(answers)) fail(answers);
  const messages = newUserMessages(input.messages);
  if (!Array.isArray(messages)) fail(messages);
  if (answers.length === 0 && messages.length === 0 && resume.length > 0)
    refused(409, "every interrupt this run answers is closed already, and it brings no new message", CODES.aguiInterruptClosed, {
      interruptIds: resume.map((r) => r.interruptId),
    });
  if (answers.length === 0 && messages.length === 0)
    refused(400, "nothing to run: no user message after the conversation's last reply, and no resume entry", CODES.aguiNothingToRun);
  for (const a of answers) {
    if (a.kind === "approval") valueOf(await stub.resolveApproval(a.id, a.decision));
    else valueOf(await stub.resolveQuestion(a.id, a.action, a.answer));
  }
  let after = head;
  const inputs: number[] = [];
  for (const m of messages) {
    const posted = valueOf(await stub.postMessage({ text: m.text, from: AGUI_SENDER, clientMessageId: m.id }, `agui:${m.id}`));
    inputs.push(posted.seq);
    if (posted.replayed) after = Math.min(after, posted.seq - 1);
  }
  return { after, inputs, answered: answers.map((a) => a.id) };
}
