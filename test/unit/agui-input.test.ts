import { describe, expect, it } from "vitest";
import { newUserMessages, resumeAnswers } from "../../src/rules/agui-input.js";

describe("what an AG-UI run brings", () => {
  it("takes the user messages after the client's last message of another role", () => {
    const messages = [
      { id: "u1", role: "user", content: "first" },
      { id: "a1", role: "assistant", content: "reply" },
      { id: "u2", role: "user", content: "second" },
      { id: "u3", role: "user", content: [{ type: "text", text: "third" }] },
    ];
    expect(newUserMessages(messages)).toEqual([
      { id: "u2", text: "second" },
      { id: "u3", text: "third" },
    ]);
    expect(newUserMessages(messages.slice(0, 2))).toEqual([]);
  });

  it("refuses a new message with no text", () => {
    const r = newUserMessages([{ id: "u1", role: "user", content: [{ type: "image", source: { type: "url", value: "x" } }] }]);
    expect(r).toMatchObject({ ok: false, status: 400, body: { code: "agui-message-unsupported" } });
  });

  it("answers open interrupts by kind, passes over closed ones, and refuses unknown ones and wrong payloads", () => {
    const named = [
      { id: "appr_1", kind: "approval" as const, open: true },
      { id: "req_1", kind: "question" as const, open: true },
      { id: "appr_old", kind: "approval" as const, open: false },
    ];
    expect(
      resumeAnswers(
        [
          { interruptId: "appr_1", status: "resolved", payload: { decision: "allow" } },
          { interruptId: "req_1", status: "resolved", payload: { answer: "blue" } },
          { interruptId: "appr_old", status: "resolved", payload: { decision: "deny" } },
        ],
        named,
      ),
    ).toEqual([
      { kind: "approval", id: "appr_1", decision: "allow" },
      { kind: "question", id: "req_1", action: "answer", answer: "blue" },
    ]);
    expect(resumeAnswers([{ interruptId: "appr_1", status: "cancelled" }, { interruptId: "req_1", status: "cancelled" }], named)).toEqual([
      { kind: "approval", id: "appr_1", decision: "deny" },
      { kind: "question", id: "req_1", action: "dismiss" },
    ]);
    expect(resumeAnswers([{ interruptId: "nope", status: "resolved" }], named)).toMatchObject({ ok: false, status: 409, body: { code: "agui-interrupt-closed" } });
    expect(resumeAnswers([{ interruptId: "appr_1", status: "resolved", payload: { answer: "x" } }], named)).toMatchObject({
      ok: false,
      status: 400,
      body: { code: "agui-resume-invalid" },
    });
    expect(resumeAnswers([{ interruptId: "req_1", status: "resolved", payload: {} }], named)).toMatchObject({ ok: false, body: { code: "agui-resume-invalid" } });
  });
});
