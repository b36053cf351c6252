import { waitFor } from "../support/wait-for.js";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newThread, value } from "./support.js";

type Stub = Awaited<ReturnType<typeof newThread>>["stub"];

async function events(stub: Stub): Promise<{ seq: number; kind: string; body: any }[]> {
  return JSON.parse(value(await stub.page({ after: 0, limit: 1000, waitMs: 0 }))).events;
}

async function untilRunning(stub: Stub): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (value(await stub.turnStatus()).running) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("no turn started");
}

async function untilIdle(stub: Stub): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const t = value(await stub.turnStatus());
    if (!t.running && t.queued === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the thread never went idle");
}

describe("turns (scripted engine)", () => {
  it("answers a sent message with the turn's reply, and records the turn in the log", async () => {
    const { stub } = await newThread();
    const sent = value(await stub.send({ text: "hello" }));
    expect(sent).toMatchObject({ seq: 2, outcome: "completed", failure: null, reply: { text: "engine saw: hello (0 before)" } });
    const kinds = (await events(stub)).map((e) => e.kind);
    expect(kinds).toEqual(["spawn", "message", "turn-started", "reply", "usage", "turn-ended"]);
    const row = value(await stub.get());
    expect(row).toMatchObject({ stage: "idle", turns: 1, cost: { usd: 0.001, inputTokens: 10, outputTokens: 5 } });
  });

  it("caps a tool result's output where it is recorded, whatever engine sent it", async () => {
    const { stub } = await newThread();
    value(await stub.send({ text: "bigtool" }));
    const result = (await events(stub)).find((e) => e.kind === "tool-result");
    expect(result?.body.output).toBe(`${"z".repeat(256 * 1024)}\n[output cut at ${256 * 1024} bytes of 300000]`);
  });

  it("records usage without a price as usd null, counting the call apart from the priced cost", async () => {
    const { stub } = await newThread();
    value(await stub.send({ text: "unpriced" }));
    value(await stub.send({ text: "priced" }));
    expect((await events(stub)).filter((e) => e.kind === "usage").map((e) => e.body.usd)).toEqual([null, 0.001]);
    expect(value(await stub.get()).cost).toEqual({ usd: 0.001, inputTokens: 20, outputTokens: 10, unpricedCalls: 1 });
  });

  it("ends a turn the output limit cut with turn-ended saying so", async () => {
    const { stub } = await newThread();
    value(await stub.send({ text: "cut" }));
    expect((await events(stub)).find((e) => e.kind === "turn-ended")?.body).toEqual({ turnId: expect.any(String), stop: "length" });
  });

  it("queues messages that arrive during a turn and answers them together, in order, next", async () => {
    const { stub } = await newThread();
    value(await stub.postMessage({ text: "hang" }));
    // Until the turn has taken its inputs, a new message would still join it.
    await untilRunning(stub);
    const a = value(await stub.postMessage({ text: "first" }));
    const b = value(await stub.postMessage({ text: "second" }));
    expect(value(await stub.turnStatus())).toMatchObject({ running: true, queued: 2 });
    const ended = value(await stub.interrupt());
    expect(ended).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    await untilIdle(stub);
    const log = await events(stub);
    const starts = log.filter((e) => e.kind === "turn-started");
    expect(starts.map((e) => e.body.inputs)).toEqual([[2], [a.seq, b.seq]]);
    const reply = log.filter((e) => e.kind === "reply").at(-1)!;
    // The second turn saw the first one's input in its transcript.
    expect(reply.body.text).toBe("engine saw: first | second (1 before)");
  });

  it("counts only the turns that answer its prompt when a loop starts during another turn", async () => {
    const { stub } = await newThread();
    value(await stub.postMessage({ text: "hang" }));
    await untilRunning(stub);
    value(await stub.startLoop("loop prompt", 1, undefined));
    value(await stub.interrupt());
    await untilIdle(stub);
    expect(value(await stub.loopState()).loop).toMatchObject({ status: "finished", reason: "max-turns", done: 1 });
    const replies = (await events(stub)).filter((e) => e.kind === "reply").map((e) => e.body.text);
    expect(replies).toEqual(["engine saw: loop prompt (1 before)"]);
  });

  it("refuses an interrupt when no turn runs", async () => {
    const { stub } = await newThread();
    expect(await stub.interrupt()).toMatchObject({ ok: false, status: 409, body: { code: "no-turn-running" } });
  });

  it("records a turn whose engine host went away as lost, one with a malformed report as failed, and stays usable", async () => {
    const { stub } = await newThread();
    const crashed = value(await stub.send({ text: "crash" }));
    expect(crashed).toMatchObject({ outcome: "failed", failure: { class: "session" } });
    const system = (await events(stub)).find((e) => e.kind === "system");
    expect(system?.body.text).toMatch(/^This turn was lost to a host restart: /);
    const garbage = value(await stub.send({ text: "garbage" }));
    expect(garbage).toMatchObject({ outcome: "failed", failure: { class: "session" } });
    const next = value(await stub.send({ text: "still there?" }));
    expect(next).toMatchObject({ outcome: "completed", reply: { text: "engine saw: still there? (2 before)" } });
    const failed = (await events(stub)).filter((e) => e.kind === "turn-failed").map((e) => e.body.class);
    expect(failed).toEqual(["session", "session"]);
    const incidents = await env.HOST.get(env.HOST.idFromName("host")).incidents(0);
    expect(incidents.map((i) => i.class)).toContain("session");
  });

  it("cuts a turn whose engine ignores the interrupt after the grace time", async () => {
    const { stub } = await newThread();
    value(await stub.postMessage({ text: "stubborn" }));
    // The message is accepted before its turn starts: wait for the turn, then interrupt it.
    await waitFor(async () => value(await stub.turnStatus()).running);
    const result = value(await stub.interrupt());
    expect(result.failure).toMatchObject({ class: "interrupted", error: expect.stringContaining("did not stop in time") });
    expect(value(await stub.get()).stage).toBe("idle");
  });
});
