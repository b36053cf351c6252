import { describe, expect, it } from "vitest";
import { RuntimeError } from "../../client/index.js";
import { useFront } from "../support/use-front.js";
import { sim, waitFor } from "../support/http.js";

const front = useFront();

describe("the client library drives a turn", () => {
  it("sends, approves by callId, answers a question, forks, loops, and reports refusals as rejected", async () => {
    const c = front().client;
    const { threadId } = await c.spawn({ permissions: "ask" });
    const sent = await c.send(threadId, { text: "hi" });
    expect(sent.reply?.text).toBe("echo: hi");

    await c.post(threadId, { text: sim({ tool: { name: "shell", input: { command: "echo from-client" } } }) });
    const callId = await waitFor(async () => (await c.turn(threadId)).waitingOn.approvals[0]);
    expect((await c.approvals()).approvals.map((a) => a.approvalId)).toContain(callId);
    expect(await c.approve(threadId, callId, "allow")).toMatchObject({ approvalId: callId, decision: "allow" });
    expect(await c.approve(threadId, callId, "allow")).toMatchObject({ code: "approval-closed" });

    await waitFor(async () => !(await c.turn(threadId)).running);
    await c.post(threadId, { text: sim({ ask: "why?" }) });
    const requestId = await waitFor(async () => (await c.turn(threadId)).waitingOn.questions[0]);
    expect((await c.question(threadId, requestId)).status).toBe("open");
    expect((await c.answer(threadId, requestId, "because")).status).toBe("answered");
    await waitFor(async () => !(await c.turn(threadId)).running);

    const child = await c.fork(threadId, { atSeq: sent.reply!.seq });
    expect((await c.thread(child.threadId)).parent).toBe(threadId);

    const loop = await c.startLoop(child.threadId, { prompt: "again", maxTurns: 2 });
    expect(loop.status).toBe("running");
    await waitFor(async () => (await c.loop(child.threadId)).loop?.status === "finished");

    const refused = await c.interrupt(threadId).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RuntimeError);
    expect(refused).toMatchObject({ kind: "rejected", status: 409, code: "no-turn-running" });
  });
});
