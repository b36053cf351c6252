import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpAgent, verifyEvents, type BaseEvent } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";

let front: Front;
let base: string;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-agui-"));

beforeAll(async () => {
  front = await startFront();
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", spec);
  expect(r.status).toBe(201);
  return r.body.threadId;
}

async function idle(id: string): Promise<void> {
  await waitFor(async () => {
    const t = (await call(base, "GET", `/threads/${id}/turn`)).body;
    return !t.running && t.queued === 0;
  });
}

/** The AG-UI events of `GET /agui` from `after` up to the frame with id `last`, as the official client parses them. */
async function aguiFrom(id: string, after: number, last: number): Promise<BaseEvent[]> {
  const controller = new AbortController();
  const res = await fetch(`${base}/threads/${id}/agui?after=${after}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const out: BaseEvent[] = [];
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let at: number;
    let seen = false;
    while ((at = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const data = frame.split("\n").find((l) => l.startsWith("data: "));
      if (data) out.push(JSON.parse(data.slice(6)) as BaseEvent);
      if (frame.split("\n").includes(`id: ${last}`)) seen = true;
    }
    if (seen) break;
  }
  controller.abort();
  return out;
}

async function verified(list: BaseEvent[]): Promise<BaseEvent[]> {
  return lastValueFrom(from(list).pipe(verifyEvents(false), toArray()));
}

describe("AG-UI through the official client", () => {
  it("an HttpAgent run: the user's message in, the streamed reply out, one run", async () => {
    const id = await spawn();
    const agent = new HttpAgent({ url: `${base}/threads/${id}/agui`, threadId: id });
    agent.addMessage({ id: "u-1", role: "user", content: sim({ chunks: 4, delayMs: 10 }, "hello there") });
    const seen: string[] = [];
    const result = await agent.runAgent({ runId: "run-1" }, { onEvent: ({ event }) => void seen.push(event.type) });
    expect(seen[0]).toBe("RUN_STARTED");
    expect(seen.at(-1)).toBe("RUN_FINISHED");
    expect(seen.filter((t) => t === "TEXT_MESSAGE_CONTENT").length).toBeGreaterThanOrEqual(1);
    expect(result.newMessages).toEqual([expect.objectContaining({ role: "assistant", content: "echo: hello there" })]);
    expect(agent.messages.map((m) => m.id)).toEqual(["u-1", expect.any(String)]);
    const logged = await events(base, id);
    expect(logged.find((e) => e.kind === "message")!.body).toMatchObject({ from: "ag-ui", clientMessageId: "u-1" });

    // The same conversation sent again writes nothing new.
    const before = logged.length;
    agent.addMessage({ id: "u-2", role: "user", content: "again" });
    await agent.runAgent({ runId: "run-2" });
    const after = await events(base, id);
    expect(after.filter((e) => e.kind === "message").map((e) => e.body.clientMessageId)).toEqual(["u-1", "u-2"]);
    expect(after.length).toBeGreaterThan(before);
  });

  it("a tool call waits as an interrupt, and a resume that allows it finishes the run", async () => {
    const id = await spawn({ cwd: work });
    const agent = new HttpAgent({ url: `${base}/threads/${id}/agui`, threadId: id });
    agent.addMessage({ id: "u-1", role: "user", content: sim({ tool: { name: "shell", input: { command: "echo agui-ok" } } }) });
    await agent.runAgent({ runId: "run-1" });
    expect(agent.pendingInterrupts).toEqual([expect.objectContaining({ reason: "tool-approval", toolCallId: expect.any(String) })]);
    const interrupt = agent.pendingInterrupts[0]!;
    const toolCalls = agent.messages.flatMap((m) => ("toolCalls" in m && m.toolCalls ? m.toolCalls : []));
    expect(toolCalls).toEqual([expect.objectContaining({ id: interrupt.toolCallId, function: expect.objectContaining({ name: "shell" }) })]);

    await agent.runAgent({ runId: "run-2", resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow" } }] });
    expect(agent.pendingInterrupts).toEqual([]);
    const tool = agent.messages.find((m) => m.role === "tool");
    expect(tool).toMatchObject({ toolCallId: interrupt.toolCallId });
    expect(String(tool!.content)).toContain("agui-ok");
    await idle(id);

    // A client whose copy of an interrupt is stale (closed since) can still go on with a new message.
    const stale = { interruptId: interrupt.id, status: "resolved", payload: { decision: "allow" } };
    const alone = await call(base, "POST", `/threads/${id}/agui`, { threadId: id, runId: "run-3", messages: [], resume: [stale] });
    expect(alone).toMatchObject({ status: 409, body: { code: "agui-interrupt-closed" } });
    const messages = [...agent.messages, { id: "u-2", role: "user", content: "and now?" }];
    const res = await fetch(`${base}/threads/${id}/agui`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ threadId: id, runId: "run-3", messages, resume: [stale] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"RUN_FINISHED"');
    expect((await events(base, id)).filter((e) => e.kind === "message").map((e) => e.body.clientMessageId)).toEqual(["u-1", "u-2"]);
  });

  it("refuses a run with nothing to run, and a resume naming no open interrupt, before writing", async () => {
    const id = await spawn();
    const nothing = await call(base, "POST", `/threads/${id}/agui`, { threadId: id, runId: "r", messages: [] });
    expect(nothing).toMatchObject({ status: 400, body: { code: "agui-nothing-to-run" } });
    const closed = await call(base, "POST", `/threads/${id}/agui`, {
      threadId: id,
      runId: "r",
      messages: [{ id: "u", role: "user", content: "hi" }],
      resume: [{ interruptId: "appr_nope", status: "resolved", payload: { decision: "allow" } }],
    });
    expect(closed).toMatchObject({ status: 409, body: { code: "agui-interrupt-closed" } });
    expect((await events(base, id)).map((e) => e.kind)).toEqual(["spawn"]);
  });

  it("GET /agui resumed from every seq of recorded threads passes the official verifier", async () => {
    const chat = await spawn();
    await call(base, "POST", `/threads/${chat}/send`, { text: sim({ chunks: 3 }, "one") });
    await call(base, "POST", `/threads/${chat}/messages`, { text: "held", hold: true });
    await call(base, "POST", `/threads/${chat}/send`, { text: sim({ fail: "quota" }, "two") });
    await call(base, "POST", `/threads/${chat}/send`, { text: "three" });
    const tools = await spawn({ cwd: work });
    await call(base, "POST", `/threads/${tools}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo x" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${tools}/turn`)).body.waitingOn.approvals[0]);
    await call(base, "POST", `/threads/${tools}/approvals/${approvalId}`, { decision: "deny" });
    await idle(tools);
    await idle(chat);
    for (const id of [chat, tools]) {
      const log = await events(base, id);
      const last = log.at(-1)!.seq;
      expect(log.at(-1)!.kind).toMatch(/^turn-/);
      for (let after = 0; after < last; after++) {
        const list = await aguiFrom(id, after, last);
        await expect(verified(list), `thread ${id} after ${after}`).resolves.toBeDefined();
      }
    }
  });

  it("GET /agui-page pages the log backwards as frame groups", async () => {
    const id = await spawn();
    await call(base, "POST", `/threads/${id}/send`, { text: "paged" });
    const page = (await call(base, "GET", `/threads/${id}/agui-page?limit=3`)).body;
    const log = await events(base, id);
    expect(page.groups.map((g: { seq: number }) => g.seq)).toEqual(log.slice(-3).map((e) => e.seq).filter((s) => page.groups.some((g: { seq: number }) => g.seq === s)));
    expect(page.nextBefore).toBe(log.at(-3)!.seq);
    const list = [...page.opening, ...page.groups.flatMap((g: { events: BaseEvent[] }) => g.events)];
    await expect(verified(list)).resolves.toBeDefined();
  });
});

