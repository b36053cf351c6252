import { AbstractAgent, verifyEvents, type BaseEvent, type Interrupt, type Message } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from, lastValueFrom, toArray, type Observable } from "rxjs";
import { describe, expect, it } from "vitest";
import { AguiEvent } from "../../src/api/agui.js";
import { AGUI_STATE_KINDS, AguiProjection, type ProjectedEvent } from "../../src/rules/agui-projection.js";

/**
 * The projection against the official client: scripted logs (with the live text deltas
 * between their events) are projected for every reader a stream can have (from the
 * start, or resuming at any seq and joining live at any later point, while a reply is
 * being written), and what each reader gets must parse with the official schemas, pass
 * the official verifier, and build the conversation the log holds.
 */

type Step = { event: ProjectedEvent } | { delta: string; turnId: string };

const THREAD = "thr_test";

/** A log script: events get consecutive seqs, deltas belong to the turn running. */
class Script {
  readonly steps: Step[] = [];
  private seq = 0;
  private turnId = "";
  constructor(readonly name: string) {}
  e(kind: string, body: Record<string, unknown> = {}): this {
    if (kind === "turn-started") this.turnId = String(body.turnId);
    this.steps.push({ event: { seq: ++this.seq, kind, body } });
    return this;
  }
  d(...deltas: string[]): this {
    for (const delta of deltas) this.steps.push({ delta, turnId: this.turnId });
    return this;
  }
  get events(): ProjectedEvent[] {
    return this.steps.flatMap((s) => ("event" in s ? [s.event] : []));
  }
}

const turn = (s: Script, turnId: string, inputs: number[]) => s.e("turn-started", { turnId, index: 1, inputs, seat: "main", engine: "pi", model: "sim-1" });
const usage = (s: Script, turnId: string) => s.e("usage", { turnId, model: "sim-1", inputTokens: 10, outputTokens: 5, usd: 0.001 });

function scripts(): Script[] {
  const out: Script[] = [];

  const text = new Script("a text turn, streamed");
  text.e("spawn", { spec: {} }).e("message", { text: "hello" });
  turn(text, "T1", [2]).d("echo", ": hel", "lo").e("reply", { turnId: "T1", text: "echo: hello" });
  usage(text, "T1").e("turn-ended", { turnId: "T1" });
  text.e("message", { text: "again", from: "ag-ui", clientMessageId: "u-2" });
  turn(text, "T2", [6]).e("reply", { turnId: "T2", text: "echo: again (not streamed)" }).e("turn-ended", { turnId: "T2" });
  out.push(text);

  const tools = new Script("text beside a tool call, allowed, then a streamed answer");
  tools.e("message", { text: "run ls" });
  turn(tools, "T1", [1]).d("Let me ", "look").e("reply", { turnId: "T1", text: "Let me look" });
  tools.e("tool-call", { turnId: "T1", callId: "c1", name: "shell", input: { command: "ls" } });
  usage(tools, "T1").e("approval-request", { turnId: "T1", approvalId: "a1", callId: "c1", name: "shell", input: { command: "ls" } });
  tools.e("approval-resolved", { approvalId: "a1", decision: "allow" });
  tools.e("tool-result", { turnId: "T1", callId: "c1", name: "shell", output: "a.txt\nb.txt", isError: false });
  tools.d("Two ", "files").e("reply", { turnId: "T1", text: "Two files." });
  usage(tools, "T1").e("turn-ended", { turnId: "T1" });
  out.push(tools);

  const denied = new Script("a tool call denied, with no text before it");
  denied.e("message", { text: "rm" });
  turn(denied, "T1", [1]).e("tool-call", { turnId: "T1", callId: "c1", name: "shell", input: { command: "rm -rf x" } });
  denied.e("approval-request", { turnId: "T1", approvalId: "a1", callId: "c1", name: "shell", input: { command: "rm -rf x" } });
  denied.e("approval-resolved", { approvalId: "a1", decision: "deny" });
  denied.e("tool-result", { turnId: "T1", callId: "c1", name: "shell", output: "denied by the user", isError: true });
  denied.d("OK").e("reply", { turnId: "T1", text: "OK, not removing it." }).e("turn-ended", { turnId: "T1" });
  out.push(denied);

  const cancelled = new Script("an approval cancelled: the turn was stopped while it waited");
  cancelled.e("message", { text: "go" });
  turn(cancelled, "T1", [1]).d("Will do").e("reply", { turnId: "T1", text: "Will do" });
  cancelled.e("tool-call", { turnId: "T1", callId: "c1", name: "shell", input: { command: "make" } });
  cancelled.e("approval-request", { turnId: "T1", approvalId: "a1", callId: "c1", name: "shell", input: { command: "make" } });
  cancelled.e("message", { text: "stop", onBusy: "interrupt" });
  cancelled.e("approval-resolved", { approvalId: "a1", decision: "cancelled" });
  cancelled.e("turn-failed", { turnId: "T1", class: "interrupted", error: "stopped" });
  out.push(cancelled);

  const two = new Script("two approvals open at once, answered out of order");
  two.e("message", { text: "both" });
  turn(two, "T1", [1]).e("tool-call", { turnId: "T1", callId: "c1", name: "shell", input: { command: "ls" } });
  two.e("tool-call", { turnId: "T1", callId: "c2", name: "shell", input: { command: "pwd" } });
  two.e("approval-request", { turnId: "T1", approvalId: "a1", callId: "c1", name: "shell", input: {} });
  two.e("approval-request", { turnId: "T1", approvalId: "a2", callId: "c2", name: "shell", input: {} });
  two.e("seat-joined", { seat: "reviewer", engine: "pi", model: "sim-1" });
  two.e("approval-resolved", { approvalId: "a2", decision: "allow" });
  two.e("tool-result", { turnId: "T1", callId: "c2", name: "shell", output: "/work", isError: false });
  two.e("approval-resolved", { approvalId: "a1", decision: "deny" });
  two.e("tool-result", { turnId: "T1", callId: "c1", name: "shell", output: "denied", isError: true });
  two.d("do", "ne").e("reply", { turnId: "T1", text: "done" }).e("turn-ended", { turnId: "T1" });
  out.push(two);

  const waiting = new Script("a log that ends with two interrupts open");
  waiting.e("message", { text: "ask" });
  turn(waiting, "T1", [1]).e("tool-call", { turnId: "T1", callId: "c1", name: "shell", input: { command: "ls" } });
  waiting.e("approval-request", { turnId: "T1", approvalId: "a1", callId: "c1", name: "shell", input: {} });
  waiting.e("question", { turnId: "T1", requestId: "q1", question: "Which branch?" });
  out.push(waiting);

  const questions = new Script("questions answered and dismissed");
  questions.e("message", { text: "q" });
  turn(questions, "T1", [1]).e("question", { turnId: "T1", requestId: "q1", question: "Which file?" });
  questions.e("question-resolved", { requestId: "q1", action: "answer", answer: "a.txt" });
  questions.d("Reading a.txt").e("reply", { turnId: "T1", text: "Reading a.txt" });
  questions.e("question", { turnId: "T1", requestId: "q2", question: "Anything else?" });
  questions.e("question-resolved", { requestId: "q2", action: "dismiss" });
  questions.e("reply", { turnId: "T1", text: "Done." }).e("turn-ended", { turnId: "T1" });
  out.push(questions);

  const failed = new Script("a failed turn, its reply half written, then a turn that works");
  failed.e("message", { text: "x" });
  turn(failed, "T1", [1]).d("par", "tial");
  usage(failed, "T1").e("turn-failed", { turnId: "T1", class: "quota", error: "quota exceeded" });
  failed.e("message", { text: "y" });
  turn(failed, "T2", [5]).d("fine").e("reply", { turnId: "T2", text: "fine" }).e("turn-ended", { turnId: "T2" });
  out.push(failed);

  const interrupted = new Script("an interrupted turn: deltas whose reply never comes");
  interrupted.e("message", { text: "long" });
  turn(interrupted, "T1", [1]).d("It was", " a dark").e("message", { text: "stop", onBusy: "interrupt" });
  interrupted.d(" and stormy").e("turn-failed", { turnId: "T1", class: "interrupted", error: "interrupted" });
  interrupted.e("message", { text: "next" });
  turn(interrupted, "T2", [5]).d("ok").e("reply", { turnId: "T2", text: "ok" }).e("turn-ended", { turnId: "T2" });
  out.push(interrupted);

  const outside = new Script("events outside turns: held, released, system, interface, other kinds");
  outside.e("spawn", { spec: {} }).e("message", { text: "later", hold: true }).e("message-edited", { target: 2, text: "later!" });
  outside.e("system", { level: "info", text: "window full, recovering", turnId: null });
  outside.e("interface", { interfaceId: "ui_1", source: "<Card/>", tree: { type: "Card", children: [] } });
  outside.e("interface", { interfaceId: "ui_2", source: "<List/>", tree: { type: "List" }, model: "sim-1" });
  outside.e("seat-joined", { seat: "b", engine: "pi", model: "sim-2", placement: "local", role: "peer" });
  outside.e("window", { kind: "summary", cut: [[1, 2]], tokensBefore: 10, tokensAfter: 5, trigger: "request" });
  outside.e("cycle", { cycle: "note", text: "hi" }).e("subscription-added", { watch: "w1" }).e("archive", { reason: null }).e("restore", {});
  outside.e("message", { text: "drop me", hold: true }).e("message-deleted", { target: 13 });
  outside.e("message-released", { target: 2 });
  turn(outside, "T1", [2]).e("system", { level: "info", text: "inside a turn", turnId: "T1" });
  outside.e("interface", { interfaceId: "ui_3", source: "<X/>", tree: {} }).d("ok").e("reply", { turnId: "T1", text: "ok" });
  outside.e("memory-recalled", { turnId: "T1", ids: [], usedTokens: 0 }).e("turn-ended", { turnId: "T1" });
  out.push(outside);

  const openText = new Script("a turn still writing its reply when the log ends");
  openText.e("message", { text: "write" });
  turn(openText, "T1", [1]).d("Once", " upon", " a time");
  out.push(openText);

  return out;
}

/** What a stream reader's feed holds of the reply being written: as `AguiFeed` keeps it. */
function streamingAt(steps: Step[]): { turnId: string; text: string } | null {
  let streaming = null as { turnId: string; text: string } | null;
  for (const s of steps) {
    if ("delta" in s) {
      if (streaming?.turnId !== s.turnId) streaming = { turnId: s.turnId, text: "" };
      streaming.text += s.delta;
    } else if (["reply", "tool-call", "turn-started", "turn-ended", "turn-failed"].includes(s.event.kind)) streaming = null;
  }
  return streaming;
}

const STATE = new Set<string>(AGUI_STATE_KINDS);

/**
 * What a reader resuming after seq `after` and joining live at step `live` is sent:
 * the fold to `after` (state kinds only, as the feed reads them), the opening, the
 * catch-up of the log up to `live`, the reply being written then, and the rest live.
 */
function readerEvents(script: Script, after: number, live: number, opts: { opening?: boolean } = {}): AguiEvent[] {
  const p = new AguiProjection(THREAD);
  for (const [seq, text] of heldAt(script, after)) p.holding(seq, text);
  for (const e of script.events) if (e.seq <= after && STATE.has(e.kind)) p.fold(e);
  const out: AguiEvent[] = opts.opening === false ? (p.opening(), []) : p.opening();
  for (const s of script.steps.slice(0, live)) if ("event" in s && s.event.seq > after) out.push(...p.event(s.event));
  const streaming = streamingAt(script.steps.slice(0, live));
  if (streaming) out.push(...p.delta({ type: "text", turnId: streaming.turnId, delta: streaming.text }));
  for (const s of script.steps.slice(live)) out.push(...("event" in s ? p.event(s.event) : p.delta({ type: "text", turnId: s.turnId, delta: s.delta })));
  return out;
}

/** The messages held at `after` and their text as last edited then, as the feed reads them from the log. */
function heldAt(script: Script, after: number): Map<number, string> {
  const held = new Map<number, string>();
  for (const { seq, kind, body } of script.events) {
    if (seq > after) break;
    if (kind === "message" && body.hold === true) held.set(seq, String(body.text));
    if (kind === "message-edited" && held.has(Number(body.target))) held.set(Number(body.target), String(body.text));
    if (kind === "message-released" || kind === "message-deleted") held.delete(Number(body.target));
  }
  return held;
}

/** Every (after, live) a reader can have: after any seq, live at any later step. */
function joins(script: Script): { after: number; live: number }[] {
  const out: { after: number; live: number }[] = [];
  const steps = script.steps;
  for (let live = 0; live <= steps.length; live++) {
    const seen = steps.slice(0, live).flatMap((s) => ("event" in s ? [s.event.seq] : []));
    for (const after of [0, ...seen]) out.push({ after, live });
  }
  return out;
}

async function verify(list: AguiEvent[]): Promise<void> {
  await lastValueFrom(from(list as BaseEvent[]).pipe(verifyEvents(false), toArray()), { defaultValue: [] });
}

/** An agent the official client drives over a recorded list of events. */
class Replay extends AbstractAgent {
  constructor(private readonly list: AguiEvent[]) {
    super({ threadId: THREAD });
  }
  run(): Observable<BaseEvent> {
    return from(this.list as BaseEvent[]);
  }
}

async function applied(list: AguiEvent[]): Promise<{ messages: Message[]; pendingInterrupts: Interrupt[] }> {
  const agent = new Replay(list);
  await agent.runAgent({ runId: "replay" });
  return { messages: agent.messages, pendingInterrupts: agent.pendingInterrupts };
}

/** What the log says the conversation holds, by AG-UI id. */
function expected(script: Script) {
  const replies = new Map<string, string>();
  const replyIds = new Map<number, string>();
  const streamed = new Map<string, string>();
  const calls = new Map<string, { name: string; args: string }>();
  const results = new Map<string, string>();
  const users = new Map<string, string>();
  const open = new Map<string, string>();
  let turnId = "";
  let n = 0;
  let writing = "";
  for (const s of script.steps) {
    if ("delta" in s) {
      writing += s.delta;
      continue;
    }
    const { kind, body, seq } = s.event;
    if (kind === "turn-started" || kind === "turn-ended" || kind === "turn-failed") {
      if (writing) streamed.set(`${turnId}.r${n + 1}`, writing);
      writing = "";
      turnId = String(body.turnId);
      n = 0;
      if (kind !== "turn-started") open.clear();
    }
    if (kind === "reply") {
      replies.set(`${turnId}.r${++n}`, String(body.text));
      replyIds.set(seq, `${turnId}.r${n}`);
      writing = "";
    }
    if (kind === "tool-call") {
      if (writing) streamed.set(`${turnId}.r${n + 1}`, writing);
      writing = "";
      calls.set(String(body.callId), { name: String(body.name), args: JSON.stringify(body.input) });
    }
    if (kind === "tool-result") results.set(String(body.callId), String(body.output));
    if (kind === "message" && body.hold !== true) users.set(body.from === "ag-ui" ? String(body.clientMessageId) : `m${seq}`, String(body.text));
    if (kind === "message-released") users.set(`m${body.target}`, heldAt(script, seq - 1).get(Number(body.target))!);
    if (kind === "approval-request") open.set(String(body.approvalId), "tool-approval");
    if (kind === "question") open.set(String(body.requestId), "question");
    if (kind === "approval-resolved") open.delete(String(body.approvalId));
    if (kind === "question-resolved") open.delete(String(body.requestId));
  }
  if (writing) streamed.set(`${turnId}.r${n + 1}`, writing);
  return { replies, replyIds, streamed, calls, results, users, open };
}

describe("AguiProjection against the official AG-UI client", () => {
  for (const script of scripts()) {
    describe(script.name, () => {
      it("sends only events the official schemas (and ours) parse", () => {
        for (const { after, live } of joins(script))
          for (const e of readerEvents(script, after, live)) {
            expect(EventSchemas.safeParse(e).success, JSON.stringify(e)).toBe(true);
            expect(AguiEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
          }
      });

      it("passes the official verifier for every reader: resumed after any seq, joining live at any step", async () => {
        for (const { after, live } of joins(script)) {
          const list = readerEvents(script, after, live);
          await expect(verify(list), `after ${after}, live at step ${live}: ${JSON.stringify(list)}`).resolves.toBeUndefined();
        }
      });

      it("builds the log's conversation in the official client, whatever point the reader joined at", async () => {
        const want = expected(script);
        for (const { after, live } of joins(script)) {
          const where = `after ${after}, live at step ${live}`;
          const { messages, pendingInterrupts } = await applied(readerEvents(script, after, live));
          const seenAfter = (seq: number) => seq > after;
          for (const m of messages) {
            if (m.role === "assistant" && typeof m.content === "string" && m.content !== "") {
              const reply = want.replies.get(m.id);
              // A reply's text, whole, however much of it streamed; a reply that never came is what streamed.
              if (reply !== undefined) expect(m.content, `${where}: ${m.id}`).toBe(reply);
              else expect(want.streamed.get(m.id), `${where}: ${m.id} is no reply of the log`).toBeDefined();
            }
            if (m.role === "user") expect(m.content, `${where}: ${m.id}`).toBe(want.users.get(m.id));
          }
          const calls = messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
          const results = messages.flatMap((m) => (m.role === "tool" ? [m] : []));
          for (const e of script.events.filter((e) => seenAfter(e.seq))) {
            if (e.kind === "tool-call")
              expect(calls.find((c) => c.id === e.body.callId)?.function, `${where}: call ${e.body.callId}`).toEqual({
                name: want.calls.get(String(e.body.callId))!.name,
                arguments: want.calls.get(String(e.body.callId))!.args,
              });
            if (e.kind === "tool-result") expect(results.find((r) => r.toolCallId === e.body.callId)?.content, `${where}: result ${e.body.callId}`).toBe(e.body.output);
            if (e.kind === "reply") expect(messages.find((m) => m.id === want.replyIds.get(e.seq))?.content, `${where}: reply ${e.seq}`).toBe(e.body.text);
            if (e.kind === "message" && e.body.hold !== true) expect(messages.some((m) => m.role === "user" && m.content === e.body.text), `${where}: message ${e.seq}`).toBe(true);
            if (e.kind === "message-released") expect(messages.find((m) => m.id === `m${e.body.target}`), `${where}: released ${e.seq}`).toMatchObject({ role: "user", content: want.users.get(`m${e.body.target}`) });
            if (e.kind === "interface") expect(messages.find((m) => m.id === e.body.interfaceId), `${where}: interface ${e.seq}`).toMatchObject({ role: "activity", activityType: "interface" });
          }
          // A tool result sits right after the assistant message that called it.
          for (const r of results) {
            const at = messages.indexOf(r);
            const owner = messages.findIndex((m) => m.role === "assistant" && (m.toolCalls ?? []).some((c) => c.id === r.toolCallId));
            if (owner >= 0) expect(owner, `${where}: result ${r.toolCallId}`).toBeLessThan(at);
          }
          // A reader that saw any interrupt finish a run holds the interrupts open at the log's end.
          const sawInterrupt = script.events.some((e) => seenAfter(e.seq) && (e.kind === "approval-request" || e.kind === "question"));
          if (sawInterrupt) expect(pendingInterrupts.map((i) => [i.id, i.reason]), where).toEqual([...want.open.entries()]);
        }
      });
    });
  }

  it("the whole thread, read from the start, is the conversation the log holds", async () => {
    const script = scripts()[1]!;
    const { messages } = await applied(readerEvents(script, 0, 0));
    expect(messages.map((m) => [m.role, m.id])).toEqual([
      ["user", "m1"],
      ["assistant", "T1.r1"],
      ["tool", "t8"],
      ["assistant", "T1.r2"],
    ]);
    expect(messages[1]).toMatchObject({ content: "Let me look", toolCalls: [{ id: "c1", function: { name: "shell", arguments: '{"command":"ls"}' } }] });
  });

  it("an interrupt stays pending for the client until it is answered", async () => {
    const script = scripts().find((s) => s.name.startsWith("a log that ends"))!;
    const { pendingInterrupts } = await applied(readerEvents(script, 0, 0));
    expect(pendingInterrupts).toEqual([
      expect.objectContaining({ id: "a1", reason: "tool-approval", toolCallId: "c1" }),
      expect.objectContaining({ id: "q1", reason: "question", message: "Which branch?" }),
    ]);
  });

  it("a reader that joins while interrupts wait is told of them at once", async () => {
    const script = scripts().find((s) => s.name.startsWith("a log that ends"))!;
    const last = script.events.at(-1)!.seq;
    const { pendingInterrupts } = await applied(readerEvents(script, last, script.steps.length));
    expect(pendingInterrupts.map((i) => i.id)).toEqual(["a1", "q1"]);
  });

  describe("controls: the checks above can fail", () => {
    const script = scripts()[1]!;
    const mid = script.events.find((e) => e.kind === "tool-result")!.seq;

    it("a reader joining mid-turn without the opening is refused by the verifier", async () => {
      const without = readerEvents(script, mid - 1, script.steps.length, { opening: false });
      await expect(verify(without)).rejects.toThrow(/First event must be 'RUN_STARTED'/);
      await expect(verify(readerEvents(script, mid - 1, script.steps.length))).resolves.toBeUndefined();
    });

    it("a reply whose text is not what streamed shows the streamed text, which the conversation check catches", async () => {
      const lying = new Script("lying");
      lying.e("message", { text: "x" });
      turn(lying, "T1", [1]).d("abc").e("reply", { turnId: "T1", text: "xyz" }).e("turn-ended", { turnId: "T1" });
      const { messages } = await applied(readerEvents(lying, 0, 0));
      expect(messages.find((m) => m.id === "T1.r1")?.content).not.toBe("xyz");
    });

    it("a text message left open when its run finishes is refused", async () => {
      const list = readerEvents(script, 0, 0).filter((e) => !(e.type === "TEXT_MESSAGE_END" && e.messageId === "T1.r2"));
      await expect(verify(list)).rejects.toThrow(/text messages are still active/);
    });
  });
});

/** A POST run's stream: the fold to where it starts, its opening, then the rest live. */
function singleRunEvents(script: Script, after: number, run: { inputs: number[]; answered?: string[] }): AguiEvent[] {
  const p = new AguiProjection(THREAD, { runId: "client-run", inputs: new Set(run.inputs), turnId: null, answered: new Set(run.answered ?? []) });
  for (const [seq, text] of heldAt(script, after)) p.holding(seq, text);
  for (const e of script.events) if (e.seq <= after && STATE.has(e.kind)) p.fold(e);
  const out = p.opening();
  const start = script.steps.findIndex((s) => "event" in s && s.event.seq === after) + 1;
  for (const s of script.steps.slice(start)) {
    out.push(...("event" in s ? p.event(s.event) : p.delta({ type: "text", turnId: s.turnId, delta: s.delta })));
    if (p.finished) break;
  }
  return out;
}

describe("AguiProjection: one POST run", () => {
  it("passes the verifier as one run, whichever message of whichever script it posted and wherever its stream starts", async () => {
    for (const script of scripts()) {
      for (const t of script.events.filter((e) => e.kind === "turn-started")) {
        const inputs = t.body.inputs as number[];
        for (let after = 0; after < inputs[0]!; after++) {
          const list = singleRunEvents(script, after, { inputs });
          const where = `${script.name}: run of ${inputs}, after ${after}`;
          await expect(verify(list), where).resolves.toBeUndefined();
          expect(list.filter((e) => e.type === "RUN_STARTED"), where).toHaveLength(1);
          const last = list.at(-1)!;
          const ends = script.events.some((e) => (e.kind === "turn-ended" || e.kind === "turn-failed") && e.body.turnId === t.body.turnId);
          if (ends) expect(["RUN_FINISHED", "RUN_ERROR"], where).toContain(last.type);
          for (const e of list) expect(EventSchemas.safeParse(e).success, JSON.stringify(e)).toBe(true);
        }
      }
    }
  });

  it("is one run with the client's id, through a turn that was already running, until its own turn ends", async () => {
    const s = new Script("queued behind a running turn");
    s.e("message", { text: "first" });
    turn(s, "T0", [1]).d("fir").e("message", { text: "posted by the run", from: "ag-ui", clientMessageId: "u-9" });
    s.d("st").e("reply", { turnId: "T0", text: "first" }).e("turn-ended", { turnId: "T0" });
    turn(s, "T1", [3]).d("sec", "ond").e("reply", { turnId: "T1", text: "second" }).e("turn-ended", { turnId: "T1" });
    s.e("message", { text: "after the run" });
    const list = singleRunEvents(s, 2, { inputs: [3] });
    await verify(list);
    expect(list.filter((e) => e.type === "RUN_STARTED" || e.type === "RUN_FINISHED")).toEqual([
      { type: "RUN_STARTED", threadId: THREAD, runId: "client-run" },
      { type: "RUN_FINISHED", threadId: THREAD, runId: "client-run", outcome: { type: "success" } },
    ]);
    const { messages } = await applied(list);
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["first", "second"]);
    expect(messages.find((m) => m.id === "u-9")).toMatchObject({ role: "user", content: "posted by the run" });
  });

  it("a resume continues the waiting turn and finishes at its end, or at its next interrupt", async () => {
    const s = scripts().find((x) => x.name.startsWith("text beside a tool call"))!;
    const asked = s.events.find((e) => e.kind === "approval-request")!.seq;
    const list = singleRunEvents(s, asked, { inputs: [] });
    await verify(list);
    expect(list[0]).toMatchObject({ type: "RUN_STARTED", runId: "client-run" });
    expect(list.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "client-run", outcome: { type: "success" } });
    const { messages } = await applied(list);
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["Two files."]);

    const q = scripts().find((x) => x.name.startsWith("questions"))!;
    const first = q.events.find((e) => e.kind === "question")!.seq;
    const again = singleRunEvents(q, first, { inputs: [] });
    await verify(again);
    expect(again.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt", interrupts: [{ id: "q2", reason: "question" }] } });
  });

  it("a resume that answers one of two open interrupts finishes at once with the one still open", async () => {
    const s = scripts().find((x) => x.name.startsWith("two approvals"))!;
    const bothOpen = s.events.find((e) => e.kind === "seat-joined")!.seq;
    const list = singleRunEvents(s, bothOpen, { inputs: [], answered: ["a2"] });
    await verify(list);
    expect(list.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "client-run", outcome: { type: "interrupt", interrupts: [{ id: "a1" }] } });
    expect(list.filter((e) => e.type === "RUN_FINISHED")).toHaveLength(1);
    // A run that answers both goes on to the turn's end.
    const both = singleRunEvents(s, bothOpen, { inputs: [], answered: ["a1", "a2"] });
    await verify(both);
    expect(both.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const { messages } = await applied(both);
    expect(messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["/work", "denied"]);
  });
});
