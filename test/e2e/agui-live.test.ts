import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AbstractAgent, HttpAgent, verifyEvents, type BaseEvent, type Interrupt, type Message } from "@ag-ui/client";
import { EventSource } from "eventsource";
import { from, lastValueFrom, toArray, type Observable } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor, type LoggedEvent } from "../support/http.js";
import { openFollow, until, type RawFollow } from "../support/sse.js";

/**
 * AG-UI live, through the real front: readers that join while a reply is being written
 * or while an approval waits, a resume across the end of a turn, and an `HttpAgent` run
 * on each engine. What arrives must pass the official verifier and build, in the
 * official client, the text the log holds.
 */

let front: Front;
let base: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-agui-live-"));

beforeAll(async () => {
  // engine_b's CLI reaches the runtime's tool server on the front's port.
  front = await startFront({ env: { SERVICE_AGENTS_PORT: String(await freePort()) } });
  base = front.url;
});
afterAll(async () => {
  if (front) {
    await front.stop();
    removeDir(front.dataDir);
  }
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const idle = (id: string) =>
  waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return !t.running && t.queued === 0;
  });

/** One SSE frame of `/agui`: its AG-UI event and the seq it carries, if any. */
interface Frame {
  id: number | null;
  event: BaseEvent;
}

function aguiFrames(f: RawFollow): Frame[] {
  return f.frames.flatMap((raw) => {
    const data = raw.split("\n").find((l) => l.startsWith("data: "));
    if (!data) return [];
    const id = raw.split("\n").find((l) => l.startsWith("id: "));
    return [{ id: id ? Number(id.slice(4)) : null, event: JSON.parse(data.slice(6)) as BaseEvent }];
  });
}

async function verified(list: BaseEvent[]): Promise<void> {
  await lastValueFrom(from(list).pipe(verifyEvents(false), toArray()));
}

/** The official client's agent, fed a recorded list of events. */
class Replay extends AbstractAgent {
  constructor(private readonly list: BaseEvent[]) {
    super({ threadId: "replay" });
  }
  run(): Observable<BaseEvent> {
    return from(this.list);
  }
}

async function applied(list: BaseEvent[]): Promise<{ messages: Message[]; pendingInterrupts: Interrupt[] }> {
  const agent = new Replay(list);
  await agent.runAgent({ runId: "replay" });
  return { messages: agent.messages, pendingInterrupts: agent.pendingInterrupts };
}

/** Waits until the thread's live stream has sent some of the turn's reply, and answers the log's last seq then. */
async function midReply(id: string): Promise<number> {
  const stream = await openFollow(base, `/threads/${id}/stream`);
  try {
    await until(() => stream.frames.some((f) => f.includes('"type":"text"')), 15_000);
  } finally {
    stream.close();
  }
  return (await events(base, id)).at(-1)!.seq;
}

const lastRunFinished = (f: RawFollow) => () => aguiFrames(f).some((x) => x.event.type === "RUN_FINISHED" || x.event.type === "RUN_ERROR");

describe("AG-UI live through the front", () => {
  it("a reader that opens GET /agui while a reply streams gets the whole reply, as the log holds it", async () => {
    const id = await spawn();
    const reply = "The quick brown fox jumps over the lazy dog, and then over it again.";
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ reply, chunks: 20, delayMs: 150 }) });
    const head = await midReply(id);
    const turnId = (await events(base, id)).find((e) => e.kind === "turn-started")!.body.turnId;
    const finished = (f: RawFollow) => () => aguiFrames(f).some((x) => x.event.type === "RUN_FINISHED" && (x.event as { runId?: string }).runId === turnId);
    // Two readers join at that moment: one resuming at the log's head, one from the start.
    const atHead = await openFollow(base, `/threads/${id}/agui?after=${head}`);
    const fromStart = await openFollow(base, `/threads/${id}/agui?after=0`);
    try {
      await until(finished(atHead), 20_000);
      await until(finished(fromStart), 20_000);
    } finally {
      atHead.close();
      fromStart.close();
    }
    const log = await events(base, id);
    const logged = log.find((e) => e.kind === "reply")!;
    expect(logged.body.text).toBe(reply);

    const joined = aguiFrames(atHead);
    // The join was mid-reply: the run and the text so far come first, before any stored event's frame.
    expect(joined[0]!.event).toMatchObject({ type: "RUN_STARTED", runId: turnId });
    const reopened = joined.findIndex((x) => x.event.type === "TEXT_MESSAGE_START");
    expect(reopened).toBeGreaterThan(0);
    expect(joined.slice(0, reopened + 1).every((x) => x.id === null)).toBe(true);
    expect(joined.findIndex((x) => x.id === logged.seq)).toBeGreaterThan(reopened);

    for (const reader of [atHead, fromStart]) {
      const list = aguiFrames(reader).map((x) => x.event);
      await expect(verified(list)).resolves.toBeUndefined();
      const { messages } = await applied(list);
      expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([reply]);
    }
  });

  it("a reader that opens GET /agui while an approval waits: verified before and after the answer, the call and its result built", async () => {
    const id = await spawn({ cwd: work });
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ say: "Checking.", tool: { name: "shell", input: { command: "echo live-approval" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    const asked = (await events(base, id)).find((e) => e.kind === "approval-request")!;
    const fromStart = await openFollow(base, `/threads/${id}/agui?after=0`);
    const atHead = await openFollow(base, `/threads/${id}/agui?after=${(await events(base, id)).at(-1)!.seq}`);
    try {
      await until(() => aguiFrames(fromStart).some((x) => x.id === asked.seq));
      const waiting = aguiFrames(fromStart).map((x) => x.event);
      await expect(verified(waiting)).resolves.toBeUndefined();
      const before = await applied(waiting);
      expect(before.pendingInterrupts).toEqual([expect.objectContaining({ id: approvalId, reason: "tool-approval", toolCallId: asked.body.callId })]);

      expect((await call(base, "POST", `/threads/${id}/approvals/${approvalId}`, { decision: "allow" })).status).toBe(200);
      await until(lastRunFinished(atHead), 20_000);
      await until(() => aguiFrames(fromStart).at(-1)?.event.type === "RUN_FINISHED" && (aguiFrames(fromStart).at(-1)!.event as any).outcome?.type === "success", 20_000);
    } finally {
      fromStart.close();
      atHead.close();
    }
    const log = await events(base, id);
    const call1 = log.find((e) => e.kind === "tool-call")!;
    const result = log.find((e) => e.kind === "tool-result")!;
    for (const reader of [fromStart, atHead]) {
      const list = aguiFrames(reader).map((x) => x.event);
      await expect(verified(list)).resolves.toBeUndefined();
    }
    const { messages, pendingInterrupts } = await applied(aguiFrames(fromStart).map((x) => x.event));
    expect(pendingInterrupts).toEqual([]);
    const calls = messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
    expect(calls).toEqual([expect.objectContaining({ id: call1.body.callId, function: { name: call1.body.name, arguments: JSON.stringify(call1.body.input) } })]);
    expect(messages.find((m) => m.role === "tool")).toMatchObject({ toolCallId: call1.body.callId, content: result.body.output });
    // The text beside the call and the call are one assistant message, its result right after it.
    const owner = messages.findIndex((m) => m.role === "assistant" && (m.toolCalls ?? []).length > 0);
    expect(messages[owner]).toMatchObject({ content: log.find((e) => e.kind === "reply")!.body.text });
    expect(messages[owner + 1]).toMatchObject({ role: "tool" });
    const replies = log.filter((e) => e.kind === "reply").map((e) => e.body.text);
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(replies);
    await idle(id);
  });

  it("an EventSource that loses its connection resumes with Last-Event-ID across the end of a turn: no gap, no duplicate", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ chunks: 3 }, "first") });
    const first = await events(base, id);
    const cut = first.find((e) => e.kind === "reply")!.seq;
    const connections: BaseEvent[][] = [];
    const sentIds: string[] = [];
    // The first connection breaks right after the frame of the first reply, as a network would.
    const breaking = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      sentIds.push(new Headers(init?.headers).get("last-event-id") ?? "");
      const res = await fetch(url, init);
      if (sentIds.length > 1 || !res.body) return res;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const encoder = new TextEncoder();
      let text = "";
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          text += decoder.decode(value, { stream: true });
          const at = text.indexOf(`id: ${cut}\n`);
          const end = at >= 0 ? text.indexOf("\n\n", at) : -1;
          if (end >= 0) {
            controller.enqueue(encoder.encode(text.slice(sent, end + 2)));
            controller.error(new Error("connection lost"));
            void reader.cancel();
            return;
          }
          controller.enqueue(encoder.encode(text.slice(sent)));
          sent = text.length;
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const source = new EventSource(`${base}/threads/${id}/agui?after=0`, { fetch: breaking });
    source.onopen = () => connections.push([]);
    source.onmessage = (m) => connections.at(-1)!.push(JSON.parse(m.data) as BaseEvent);
    try {
      await until(() => connections.length === 2 && connections[1]!.some((e) => e.type === "RUN_FINISHED"), 20_000);
      await call(base, "POST", `/threads/${id}/send`, { text: "second" });
      // The message's own run, then its turn's.
      await until(() => connections[1]!.filter((e) => e.type === "RUN_FINISHED").length === 3, 20_000);
    } finally {
      source.close();
    }
    expect(sentIds).toEqual(["", String(cut)]);
    const log = await events(base, id);
    const whole = await readAgui(id, 0, log.at(-1)!.seq);
    const [one, two] = connections as [BaseEvent[], BaseEvent[]];
    // The second connection reopens the turn it joins (no stored event: no id), then goes on where the first stopped.
    expect(two[0]).toMatchObject({ type: "RUN_STARTED", runId: first.find((e) => e.kind === "turn-started")!.body.turnId });
    // Live text comes in deltas, caught-up text in one piece: the same text either way.
    expect(joinText([...one, ...two.slice(1)])).toEqual(joinText(whole));
    for (const list of [one, two]) await expect(verified(list)).resolves.toBeUndefined();
    const { messages } = await applied(two);
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["echo: second"]);
  });

  it("a question answered through an HttpAgent resume with { answer }", async () => {
    const id = await spawn();
    const agent = new HttpAgent({ url: `${base}/threads/${id}/agui`, threadId: id });
    agent.addMessage({ id: "u-q", role: "user", content: sim({ ask: "Which colour?" }) });
    await agent.runAgent({ runId: "ask-1" });
    expect(agent.pendingInterrupts).toEqual([expect.objectContaining({ reason: "question", message: expect.stringContaining("Which colour?") })]);
    const q = agent.pendingInterrupts[0]!;
    await agent.runAgent({ runId: "ask-2", resume: [{ interruptId: q.id, status: "resolved", payload: { answer: "blue" } }] });
    expect(agent.pendingInterrupts).toEqual([]);
    const log = await events(base, id);
    expect(log.find((e) => e.kind === "question-resolved")!.body).toMatchObject({ requestId: q.id, action: "answer", answer: "blue" });
    const replies = log.filter((e) => e.kind === "reply").map((e) => e.body.text);
    expect(replies.at(-1)).toContain("blue");
    expect(agent.messages.filter((m) => m.role === "assistant" && m.content).at(-1)?.content).toBe(replies.at(-1));
    await idle(id);
  });

  for (const [engine, spec] of [
    ["pi", {}],
    ["engine_a", { model: "claude-sim" }],
    ["engine_b", { engine: "engine_b", model: "gpt-sim" }],
  ] as const) {
    it(`HttpAgent runs on ${engine}: the streamed reply is the log's reply, and a tool call allowed through a resume`, async () => {
      const id = await spawn({ cwd: work, ...spec });
      expect((await call(base, "GET", `/threads/${id}`)).body.engine).toBe(engine);
      const agent = new HttpAgent({ url: `${base}/threads/${id}/agui`, threadId: id });
      const reply = `Written by ${engine}, in several pieces.`;
      agent.addMessage({ id: `u-${engine}`, role: "user", content: sim({ reply, chunks: 5, delayMs: 20 }) });
      const types: string[] = [];
      const { newMessages } = await agent.runAgent({ runId: `run-${engine}` }, { onEvent: ({ event }) => void types.push(event.type) });
      expect(types[0]).toBe("RUN_STARTED");
      expect(types.at(-1)).toBe("RUN_FINISHED");
      const log: LoggedEvent[] = await events(base, id);
      expect(log.filter((e) => e.kind === "reply").map((e) => e.body.text)).toEqual([reply]);
      expect(newMessages).toEqual([expect.objectContaining({ role: "assistant", content: reply })]);
      await idle(id);

      // A tool call it asks about, allowed through a resume: the interrupt names the call the client holds.
      agent.addMessage({ id: `u-${engine}-tool`, role: "user", content: sim({ tool: { name: "shell", input: { command: `echo agui-${engine}` } } }) });
      await agent.runAgent({ runId: `run-${engine}-tool` });
      expect(agent.pendingInterrupts).toEqual([expect.objectContaining({ reason: "tool-approval" })]);
      const interrupt = agent.pendingInterrupts[0]!;
      const calls = agent.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
      expect(calls.map((c) => c.id)).toContain(interrupt.toolCallId);
      await agent.runAgent({ runId: `run-${engine}-allow`, resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow" } }] });
      expect(agent.pendingInterrupts).toEqual([]);
      const result = agent.messages.find((m) => m.role === "tool" && m.toolCallId === interrupt.toolCallId);
      expect(String(result?.content)).toContain(`agui-${engine}`);
      const after = await events(base, id);
      expect(agent.messages.filter((m) => m.role === "assistant" && m.content).map((m) => m.content)).toEqual(after.filter((e) => e.kind === "reply").map((e) => e.body.text));
      await idle(id);
    });
  }
});

/** Consecutive text deltas of one message as one. */
function joinText(list: BaseEvent[]): BaseEvent[] {
  const out: BaseEvent[] = [];
  for (const e of list) {
    const prev = out.at(-1) as { type: string; messageId?: string; delta?: string } | undefined;
    const cur = e as { type: string; messageId?: string; delta?: string };
    if (cur.type === "TEXT_MESSAGE_CONTENT" && prev?.type === "TEXT_MESSAGE_CONTENT" && prev.messageId === cur.messageId) out[out.length - 1] = { ...prev, delta: prev.delta! + cur.delta! } as BaseEvent;
    else out.push(e);
  }
  return out;
}

/** `GET /agui` from `after` up to the frame with id `last`, as a fresh reader gets it. */
async function readAgui(id: string, after: number, last: number): Promise<BaseEvent[]> {
  const f = await openFollow(base, `/threads/${id}/agui?after=${after}`);
  try {
    await until(() => aguiFrames(f).some((x) => x.id === last));
  } finally {
    f.close();
  }
  const frames = aguiFrames(f);
  return frames.slice(0, frames.findIndex((x) => x.id === last) + 1).map((x) => x.event);
}
