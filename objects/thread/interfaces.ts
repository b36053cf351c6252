import { CODES } from "../../src/api/errors.js";
import type { InterfaceAnswer, InterfaceRequest } from "../../src/api/engine.js";
import type { EventKind, InterfaceBody, MessageBody, QuestionBody, ReplyBody, ToolCallBody, ToolResultBody, TurnFailedBody } from "../../src/api/events.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import type { ThreadRow } from "../../src/api/threads.js";
import { plainText, UI_STATE_LIMITS as L, type GeneratedInterface, type InterfaceSource, type UiNode, type UiState } from "../../src/api/ui.js";
import { newId } from "../../src/shared/ids.js";
import { callEngine } from "../../src/platform/engine-call.js";
import { accountScope } from "../../src/rules/accounts.js";
import { templateTree } from "../../src/rules/ui-template.js";
import { uiTreeFromText } from "../../src/rules/ui-tree.js";
import { archivedRefusal, missing } from "./refusals.js";
import type { ThreadAccess } from "./thread-access.js";
import { shownSeats, type ThreadState } from "./thread-state.js";

/** How far back the log is read for the last message, reply, failure and tool calls. */
const LOOK_BACK = 300;

type Parts = Pick<ThreadAccess, "env" | "config" | "state" | "log" | "tables" | "commits" | "append" | "prepareOrRefuse">;

/**
 * The thread's generated interfaces (docs/ui.md): the thread's state as the template and
 * the model read it, the model's tree checked and asked for again once, and the
 * `interface` event. Nothing is written unless a tree passed the catalog.
 */
export class Interfaces {
  constructor(
    private readonly thread: Parts,
    private readonly row: () => ThreadRow,
  ) {}

  async generate(asked: InterfaceSource | undefined): Promise<Outcome<GeneratedInterface>> {
    const s = this.thread.state();
    if (!s) return missing();
    if (s.archivedAt) return archivedRefusal(s);
    const configured = this.thread.config.uiModel;
    const source = asked ?? (configured ? "model" : "template");
    if (source === "model" && !configured)
      return refuse(409, "no interface model is configured (SERVICE_UI_MODEL); ask for `source: \"template\"`", CODES.uiModelNotConfigured);
    const state = await this.uiState(s);
    const written: Outcome<{ tree: UiNode; model?: string }> = source === "model" ? await this.fromModel(s, state, configured!) : ok({ tree: templateTree(state) });
    if (!written.ok) return written;
    const { tree, model } = written.value;
    const body: InterfaceBody = { interfaceId: newId("ui_"), source, ...(model !== undefined ? { model } : {}), tree, basedOnSeq: state.basedOnSeq };
    const prepared = await this.thread.prepareOrRefuse("interface", body);
    if (!prepared.ok) return prepared;
    return this.thread.commits.write(() => {
      // Retired while the model wrote: a retired thread takes no interface.
      const now = this.thread.state()!;
      if (now.archivedAt) return archivedRefusal(now);
      const e = this.thread.append(prepared.value);
      return ok({ seq: e.seq, ts: e.ts, ...body });
    });
  }

  /** The model's tree: asked once, and again with the refusal when the catalog refused it; a second refusal is the answer. */
  private async fromModel(s: ThreadState, state: UiState, model: string): Promise<Outcome<{ tree: UiNode; model: string }>> {
    const refusals: string[] = [];
    let retry: InterfaceRequest["retry"] = null;
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await this.ask(s, state, model, retry);
      if ("error" in answer) return refuse(503, `the interface model could not write an interface: ${answer.error}`, CODES.uiModelUnavailable, { model });
      const tree = uiTreeFromText(answer.text);
      if (tree.ok) return ok({ tree: tree.value, model: answer.model });
      refusals.push(tree.body.error);
      retry = { answer: answer.text, problem: tree.body.error };
    }
    return refuse(502, `the interface model wrote no tree the catalog takes, asked twice: ${refusals.join("; then: ")}`, CODES.uiModelInvalid, { model, refusals });
  }

  private async ask(s: ThreadState, state: UiState, model: string, retry: InterfaceRequest["retry"]): Promise<InterfaceAnswer> {
    const c = this.thread.config;
    const request: InterfaceRequest = {
      threadId: s.id,
      models: [model],
      account: s.spec.account,
      accountChoice: accountScope(c, s.spec.workspace),
      proxyEnv: s.spec.proxyEnv,
      timeoutMs: c.curatorTimeoutMs,
      state,
      retry,
    };
    try {
      const res = await callEngine(this.thread.env, "/interfaces", request);
      const answer = (await res.json()) as { text?: unknown; model?: unknown; error?: string };
      if (res.ok && typeof answer.text === "string" && typeof answer.model === "string") return { text: answer.text, model: answer.model };
      return { error: answer.error ?? `the engine host answered ${res.status}` };
    } catch (err) {
      return { error: `the engine host could not be reached: ${(err as Error).message}` };
    }
  }

  /** The thread as its interface shows it, at the last durable event. */
  private async uiState(s: ThreadState): Promise<UiState> {
    const row = this.row();
    const basedOnSeq = this.thread.log.durableSeq;
    const waits = this.thread.tables.openWaits();
    const state: UiState = {
      thread: {
        id: s.id,
        title: row.title === null ? null : plainText(row.title, L.title),
        type: row.type,
        role: row.role,
        workspace: row.workspace,
        engine: row.engine,
        model: row.model,
        stage: row.stage,
        turns: row.turns,
        cost: { usd: row.cost.usd, inputTokens: row.cost.inputTokens, outputTokens: row.cost.outputTokens },
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
      },
      approvals: waits
        .filter((w) => w.kind === "approval")
        .slice(0, L.open)
        .map((w) => ({ approvalId: w.id, tool: plainText(String(w.detail.name ?? "a tool"), L.title), input: plainText(JSON.stringify(w.detail.input ?? null, null, 2), L.input) })),
      questions: waits
        .filter((w) => w.kind === "question")
        .slice(0, L.open)
        .map((w) => ({ requestId: w.id, question: plainText(String((w.detail as Partial<QuestionBody>).question ?? ""), L.excerpt) })),
      lastMessage: null,
      lastReply: null,
      toolCalls: [],
      failure: null,
      seats: shownSeats(s).map((seat) => ({ name: seat.name, engine: seat.engine, model: seat.model, role: seat.role, state: seat.state, holds: seat.holds })),
      basedOnSeq,
    };
    const results = new Map<string, "ok" | "error">();
    let turnSettled = false;
    const wanted = (kind: EventKind): boolean => {
      switch (kind) {
        case "message":
          return !state.lastMessage;
        case "reply":
          return !state.lastReply;
        case "tool-call":
        case "tool-result":
          return state.toolCalls.length < L.toolCalls;
        case "turn-ended":
        case "turn-failed":
          return !turnSettled;
        default:
          return false;
      }
    };
    for (const e of this.thread.log.backward(basedOnSeq + 1, LOOK_BACK)) {
      if (!wanted(e.kind)) continue;
      const body = JSON.parse(await this.thread.log.body(e)) as unknown;
      if (e.kind === "message") {
        const m = body as MessageBody;
        state.lastMessage = { seq: e.seq, text: plainText(m.text, L.excerpt), from: m.from === undefined ? null : plainText(m.from, L.title) };
      } else if (e.kind === "reply") state.lastReply = { seq: e.seq, text: plainText((body as ReplyBody).text, L.excerpt) };
      else if (e.kind === "tool-result") {
        const r = body as ToolResultBody;
        if (!results.has(r.callId)) results.set(r.callId, r.isError ? "error" : "ok");
      } else if (e.kind === "tool-call") {
        const call = body as ToolCallBody;
        state.toolCalls.unshift({ seq: e.seq, name: plainText(call.name, L.title), input: plainText(JSON.stringify(call.input), L.input), result: results.get(call.callId) ?? "pending" });
      } else {
        turnSettled = true;
        if (e.kind === "turn-failed") {
          const f = body as TurnFailedBody;
          state.failure = { seq: e.seq, class: f.class, error: plainText(f.error, L.error) };
        }
      }
    }
    return state;
  }
}
