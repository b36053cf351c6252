import { describe, expect, it } from "vitest";
import { RuntimeError } from "../../client/index.js";
import { useFront } from "../support/use-front.js";
import { sim, waitFor } from "../support/http.js";

const front = useFront();

describe("the client library drives a turn", () => {
  it("sends, approves by approvalId, answers a question, forks, loops, and reports refusals as rejected", async () => {
    const c = front().client;
    const { threadId } = await c.spawn({ permissions: "ask" });
    const sent = await c.send(threadId, { text: "hi" });
    expect(sent.reply?.text).toBe("echo: hi");

    await c.post(threadId, { text: sim({ tool: { name: "shell", input: { command: "echo from-client" } } }) });
    const approvalId = await waitFor(async () => (await c.turn(threadId)).waitingOn.approvals[0]);
    expect((await c.approvals()).approvals.map((a) => a.approvalId)).toContain(approvalId);
    expect(await c.approve(threadId, approvalId, "allow")).toMatchObject({ approvalId, decision: "allow" });
    expect(await c.approve(threadId, approvalId, "allow")).toMatchObject({ code: "approval-closed" });

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

  it("sends and streams until the turn that answers the message ends, approvals on the way included", async () => {
    const c = front().client;
    const { threadId } = await c.spawn({ permissions: "ask" });
    const statuses: string[] = [];
    const kinds: string[] = [];
    for await (const event of c.sendAndFollow(threadId, { text: sim({ tool: { name: "shell", input: { command: "echo streamed" } }, reply: "done streaming" }) }, { onStatus: (s) => statuses.push(s) })) {
      kinds.push(event.kind);
      if (event.kind === "approval-request") await c.approve(threadId, event.body.approvalId, "allow");
    }
    expect(kinds[0]).toBe("turn-started");
    expect(kinds.at(-1)).toBe("turn-ended");
    expect(kinds).toEqual(expect.arrayContaining(["approval-request", "approval-resolved", "tool-result", "reply"]));
    expect(statuses[0]).toBe("live");
    // The turn is over when the iteration ends: the next message finds none running.
    expect((await c.turn(threadId)).running).toBe(false);

    const failed: string[] = [];
    for await (const event of c.sendAndFollow(threadId, { text: sim({ fail: "quota" }) })) failed.push(event.kind);
    expect(failed.at(-1)).toBe("turn-failed");
  });
});
