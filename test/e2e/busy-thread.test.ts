import { describe, expect, it } from "vitest";
import { call, events, sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const front = useFront();

/** A thread whose turn waits on an approval, so it stays busy until someone acts. */
async function busyThread(spec: Record<string, unknown> = {}): Promise<{ id: string; turnId: string }> {
  const base = front().url;
  const id = (await call(base, "POST", "/spawn", { permissions: "ask", ...spec })).body.threadId as string;
  await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo hi" } } }, "first") });
  const turn = await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return t.waitingOn.approvals.length > 0 ? t : null;
  });
  return { id, turnId: turn.turn.turnId };
}

describe("a message that arrives while a turn runs", () => {
  it("is refused with onBusy reject, and handed to the running turn with steer", async () => {
    const base = front().url;
    const { id, turnId } = await busyThread();
    const rejected = await call(base, "POST", `/threads/${id}/messages`, { text: "now", onBusy: "reject" });
    expect([rejected.status, rejected.body.code, rejected.body.turnId]).toEqual([409, "thread-busy", turnId]);
    expect((await events(base, id)).filter((e) => e.kind === "message").length).toBe(1);
    // Steering (test/e2e/steering.test.ts): accepted, handed to the engine, not queued.
    const steered = await call(base, "POST", `/threads/${id}/messages`, { text: "now", onBusy: "steer" });
    expect(steered.status).toBe(202);
    expect((await call(base, "GET", `/threads/${id}/steering`)).body.steering).toMatchObject([{ seq: steered.body.seq, turnId, taken: null }]);
    expect((await call(base, "GET", `/threads/${id}/turn`)).body.queued).toBe(0);
    // Queued (the default): accepted, and answered by the next turn.
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "later" })).status).toBe(202);
    expect((await call(base, "GET", `/threads/${id}/turn`)).body.queued).toBe(1);
  });

  it("stops the running turn with onBusy interrupt, and the next turn answers it", async () => {
    const base = front().url;
    const { id, turnId } = await busyThread();
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: "never mind that", onBusy: "interrupt" });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    expect(sent.body.reply.text).toBe("echo: never mind that");
    const log = await events(base, id);
    expect(log.find((e) => e.kind === "turn-failed")!.body).toMatchObject({ turnId, class: "interrupted" });
    expect(log.find((e) => e.kind === "message" && e.body.text === "never mind that")!.body.onBusy).toBe("interrupt");
  });

  it("follows the thread's default from its spawn, which a message overrides", async () => {
    const base = front().url;
    const { id } = await busyThread({ onBusy: "reject" });
    expect((await call(base, "GET", `/threads/${id}`)).body.spec.onBusy).toBe("reject");
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "now" })).body.code).toBe("thread-busy");
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "later", onBusy: "queue" })).status).toBe(202);
    // A held message is not for the running turn: it is kept whatever the default.
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "draft", hold: true })).status).toBe(202);
    expect((await call(base, "POST", "/spawn", { onBusy: "sometimes" })).status).toBe(400);
  });
});
