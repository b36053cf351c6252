import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeClient, RuntimeError, type StreamStatus } from "../../client/index.js";
import type { ThreadEvent } from "../../src/api/events.js";
import { useFront } from "../support/use-front.js";
import { sim, waitFor } from "../support/http.js";

const front = useFront();

/**
 * What stands between the client and the front: an older build with no push route
 * (`follow` answers 404 without a code), or a network that drops the next follow stream
 * once an event frame has gone through and then lets everything pass.
 */
let between: "older-build" | "drop-next-stream" | "nothing" = "older-build";
let proxy: Server;
let proxyUrl: string;
beforeAll(async () => {
  proxy = createServer((req, res) => {
    const follow = /^\/threads\/[^/]+\/follow/.test(req.url!);
    if (follow && between === "older-build") {
      req.resume();
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "no route", build: "older" }));
      return;
    }
    const drop = follow && between === "drop-next-stream";
    const upstream = httpRequest(new URL(req.url!, front().url), { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      let seen = "";
      up.on("data", (chunk: Buffer) => {
        seen += chunk;
        if (drop && between === "drop-next-stream" && seen.split("\n\n").slice(0, -1).some((frame) => frame.includes("id: "))) {
          between = "nothing";
          up.destroy();
          // Once the frame is on the wire, so the client has an event to resume after.
          res.write(chunk, () => res.destroy());
        } else res.write(chunk);
      });
      up.on("end", () => res.end());
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

/** Every event `sendAndFollow` yields for a message, and each stream status it reported with how many events it had yielded by then. */
async function sendAndCollect(c: RuntimeClient, threadId: string, text: string): Promise<{ events: ThreadEvent[]; statuses: [StreamStatus, number][] }> {
  const events: ThreadEvent[] = [];
  const statuses: [StreamStatus, number][] = [];
  for await (const event of c.sendAndFollow(threadId, { text }, { onStatus: (s) => statuses.push([s, events.length]) })) {
    events.push(event);
    if (event.kind === "approval-request") await c.approve(threadId, event.body.approvalId, "allow");
  }
  return { events, statuses };
}

const consecutive = (events: ThreadEvent[]) => events.every((e, i) => i === 0 || e.seq === events[i - 1]!.seq + 1);

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

  it("joins, replaces and removes seats, and hands the thread over", async () => {
    const c = front().client;
    const { threadId } = await c.spawn({ model: "sim-1" });
    expect((await c.joinSeat(threadId, { name: "reviewer", model: "sim-2", role: "reviewer" })).model).toBe("sim-2");
    expect((await c.send(threadId, { text: "look", seat: "reviewer" })).reply?.text).toBe("echo: look");
    expect(await c.replaceSeat(threadId, { name: "reviewer", model: "sim-2" })).toMatchObject({ changed: false });
    const offer = await c.offerHandoff(threadId, { to: "reviewer", note: "yours" });
    expect((await c.handoffs(threadId)).handoffs).toMatchObject([{ fromSeq: offer.fromSeq, state: "pending" }]);
    expect((await c.acceptHandoff(threadId, offer.fromSeq)).state).toBe("accepted");
    expect(await c.declineHandoff(threadId, offer.fromSeq).catch((e: unknown) => e)).toMatchObject({ kind: "rejected", status: 409, code: "handoff-closed" });
    expect((await c.removeSeat(threadId, "main")).holder).toBe("reviewer");
    expect((await c.steering(threadId)).steering).toEqual([]);
    const other = await c.spawn({ model: "sim-1" });
    const sub = await c.subscribe(threadId, { watch: { thread: other.threadId }, filter: { kinds: ["reply"] } });
    expect((await c.subscriptions(threadId)).subscriptions.map((s) => s.watch)).toEqual([sub.watch]);
    expect((await c.unsubscribe(threadId, sub.watch)).watch).toBe(sub.watch);
    const op = await c.startOperation(threadId, { kind: "action", title: "build" }, { idempotencyKey: "client-op" });
    expect((await c.startOperation(threadId, { kind: "action", title: "build" }, { idempotencyKey: "client-op" })).operation).toBe(op.operation);
    await c.reportOperation(threadId, op.operation, { milestone: { text: "half way" } });
    expect((await c.reportOperation(threadId, op.operation, { outcome: { status: "completed" } })).state).toBe("completed");
    expect((await c.operation(threadId, op.operation)).milestones.map((m) => m.text)).toEqual(["half way"]);
    expect((await c.operations(threadId)).operations).toHaveLength(1);
    expect(await c.reportOperation(threadId, op.operation, { outcome: { status: "failed" } }).catch((e: unknown) => e)).toMatchObject({ status: 409, code: "operation-settled" });
    const withFile = await c.send(threadId, { text: "see the file", attachments: [{ name: "a.txt", mediaType: "text/plain", text: "hello" }] });
    const [file] = (await c.attachments(threadId)).attachments;
    expect(file).toMatchObject({ seq: withFile.seq, name: "a.txt", bytes: 5 });
    expect(new TextDecoder().decode((await c.attachment(threadId, file!.sha256)).bytes)).toBe("hello");
    expect(await c.attachment(threadId, "0".repeat(64)).catch((e: unknown) => e)).toMatchObject({ kind: "rejected", status: 404, code: "attachment-not-found" });
    expect((await c.seats(threadId)).seats.map((s) => [s.name, s.state])).toEqual([
      ["main", "removed"],
      ["reviewer", "active"],
    ]);
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

  it("sends and streams by polling tail when the runtime has no push route, and still stops at the turn's end", async () => {
    between = "older-build";
    const c = new RuntimeClient({ baseUrl: proxyUrl, pollMs: 100 });
    const { threadId } = await c.spawn({ permissions: "ask" });
    const { events, statuses } = await sendAndCollect(c, threadId, sim({ tool: { name: "shell", input: { command: "echo polled" } }, reply: "done polling" }));
    expect(statuses).toEqual([["unsupported", 0]]);
    expect(events[0]!.kind).toBe("turn-started");
    expect(events.at(-1)!.kind).toBe("turn-ended");
    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(["approval-request", "tool-result", "reply"]));
    expect(consecutive(events)).toBe(true);
  });

  it("sends and streams across a dropped connection, resuming after the last event it yielded", async () => {
    between = "drop-next-stream";
    const c = new RuntimeClient({ baseUrl: proxyUrl, pollMs: 100 });
    const { threadId } = await c.spawn({ permissions: "ask" });
    const { events, statuses } = await sendAndCollect(c, threadId, sim({ tool: { name: "shell", input: { command: "echo resumed" } }, reply: "done resuming" }));
    expect(between).toBe("nothing");
    expect(statuses.map(([s]) => s)).toEqual(["live", "lost", "live"]);
    expect(statuses[1]![1]).toBeGreaterThan(0);
    expect(events[0]!.kind).toBe("turn-started");
    expect(events.at(-1)!.kind).toBe("turn-ended");
    expect(consecutive(events)).toBe(true);
  });

  it("follows a thread that does not exist to a gone status and no events", async () => {
    const statuses: StreamStatus[] = [];
    const events: ThreadEvent[] = [];
    for await (const event of front().client.follow("thr_00000000000000000000000000", { onStatus: (s) => statuses.push(s) })) events.push(event);
    expect(statuses).toEqual(["gone"]);
    expect(events).toEqual([]);
  });
});
