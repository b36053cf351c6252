import { describe, expect, it } from "vitest";
import { call, events, sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/**
 * Replies real models send routinely, on the `pi` engine over each of its protocols:
 * `sim-1` speaks chat completions, `gpt-sim` the Responses API, `claude-sim` Anthropic Messages.
 */
const MODELS = ["sim-1", "gpt-sim", "claude-sim"];

const front = useFront();

async function spawn(spec: Record<string, unknown>): Promise<string> {
  const r = await call(front().url, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const kinds = async (id: string) => (await events(front().url, id)).map((e) => e.kind);

describe.each(MODELS)("pi on %s", (model) => {
  it("records text and a tool call of one message, runs the call, then answers", async () => {
    const id = await spawn({ engine: "pi", model, permissions: "allow" });
    const r = await call(front().url, "POST", `/threads/${id}/send`, { text: sim({ say: "Let me look.", tool: { name: "shell", input: { command: "echo seen" } }, reply: "done" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "done" } });
    const log = await events(front().url, id);
    const replies = log.filter((e) => e.kind === "reply").map((e) => e.body.text);
    expect(replies).toEqual(["Let me look.", "done"]);
    expect(log.find((e) => e.kind === "tool-result")?.body).toMatchObject({ isError: false, output: expect.stringContaining("seen") });
  });

  it("asks a separate approval for each of two parallel calls, in any order", async () => {
    const id = await spawn({ engine: "pi", model, permissions: "ask" });
    const calls = [
      { name: "shell", input: { command: "echo one" } },
      { name: "shell", input: { command: "echo two" } },
    ];
    const sent = await call(front().url, "POST", `/threads/${id}/messages`, { text: sim({ tools: calls, reply: "both ran" }) });
    expect(sent.status).toBe(202);
    const first = await waitFor(async () => (await call(front().url, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    expect((await call(front().url, "POST", `/threads/${id}/approvals/${first}`, { decision: "deny" })).status).toBe(200);
    const second = await waitFor(async () => (await call(front().url, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    expect(second).not.toBe(first);
    expect((await call(front().url, "POST", `/threads/${id}/approvals/${second}`, { decision: "allow" })).status).toBe(200);
    await waitFor(async () => (await kinds(id)).includes("turn-ended"));
    const log = await events(front().url, id);
    expect(log.filter((e) => e.kind === "approval-request")).toHaveLength(2);
    const results = log.filter((e) => e.kind === "tool-result").map((e) => e.body);
    expect(results).toHaveLength(2);
    expect(results.map((r) => r.isError)).toEqual([true, false]);
    expect(results[1].output).toContain("two");
    expect(log.filter((e) => e.kind === "reply").at(-1)?.body.text).toBe("both ran");
  });

  it("never shows reasoning as the reply", async () => {
    const id = await spawn({ engine: "pi", model, permissions: "allow" });
    const r = await call(front().url, "POST", `/threads/${id}/send`, { text: sim({ reasoning: "private chain of thought", tool: { name: "shell", input: { command: "true" } }, reply: "the answer" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "the answer" } });
    const replies = (await events(front().url, id)).filter((e) => e.kind === "reply").map((e) => e.body.text);
    expect(replies.join("\n")).not.toContain("private chain of thought");
    // A second turn's request carries the first turn's transcript; the strict simulator accepts it.
    const again = await call(front().url, "POST", `/threads/${id}/send`, { text: "and now?" });
    expect(again.body).toMatchObject({ outcome: "completed" });
  });

  it("ends a turn cut by a provider mid-stream as failed, and runs none of the cut message's calls", async () => {
    const id = await spawn({ engine: "pi", model, permissions: "allow" });
    const r = await call(front().url, "POST", `/threads/${id}/send`, { text: sim({ fail: "stream-end", tool: { name: "shell", input: { command: "echo never" } } }) });
    expect(r.body.outcome).toBe("failed");
    expect(r.body.failure.class).toBe("session");
    expect((await events(front().url, id)).some((e) => e.kind === "tool-result" && !e.body.isError)).toBe(false);
  });
});

describe("length stops", () => {
  // gpt-sim is left out: pi-ai 0.73.1 does not read the Responses API's response.incomplete
  // (test/simulator/reply-shapes.test.ts), so pi sees that stop as a cut stream and fails the turn.
  it.each(["sim-1", "claude-sim"])("pi on %s: the turn ends and says the output limit cut it", async (model) => {
    const id = await spawn({ engine: "pi", model, permissions: "allow" });
    const r = await call(front().url, "POST", `/threads/${id}/send`, { text: sim({ reply: "the first half of", stop: "length" }) });
    expect(r.body).toMatchObject({ outcome: "completed", reply: { text: "the first half of" } });
    const ended = (await events(front().url, id)).find((e) => e.kind === "turn-ended");
    expect(ended?.body).toMatchObject({ stop: "length" });
  });
});

describe("cost", () => {
  it("reports usd null for a model no catalog prices, and counts the call as unpriced", async () => {
    const id = await spawn({ engine: "pi", model: "sim-unpriced" });
    const r = await call(front().url, "POST", `/threads/${id}/send`, { text: "hi" });
    expect(r.body.outcome).toBe("completed");
    const usage = (await events(front().url, id)).find((e) => e.kind === "usage");
    expect(usage?.body).toMatchObject({ model: "sim-unpriced", usd: null });
    expect((await call(front().url, "GET", `/threads/${id}`)).body.cost).toMatchObject({ usd: 0, unpricedCalls: 1 });
  });
});
