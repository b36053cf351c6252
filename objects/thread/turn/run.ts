import type { TurnEndNote, TurnFailure, TurnRequest } from "../../../src/api/engine.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { seatField } from "../../../src/rules/seat-view.js";
import { capToolOutput } from "../../../src/rules/tool-output.js";
import type { Compaction } from "../compaction/compaction.js";
import type { Waits } from "../orchestration/waits.js";
import type { Accepted, ThreadAccess } from "../thread-access.js";
import { prepareTurnEvent, prepareUsage, recordTurnEvent } from "./events.js";
import { engineInputs, viewOf } from "./inputs.js";
import type { LiveTurn } from "./live.js";
import { isGrouped, type GroupedReport, type TurnEnd } from "./runner.js";
import type { Steering } from "./steering.js";

/** What running a turn uses of its Thread: the engine, the log and tables its reports go to. */
export type RunThread = Pick<
  ThreadAccess,
  "env" | "state" | "log" | "commits" | "append" | "prepareOrRefuse" | "saveState" | "syncCatalogNow" | "tables" | "blobs" | "deltas"
>;

/** The parts a running turn's reports reach. */
export interface RunParts {
  readonly compaction: Pick<Compaction, "recover" | "reseeded" | "noteCall" | "recordEngineCompaction">;
  readonly waits: Pick<Waits, "openWait">;
  readonly steering: Pick<Steering, "take" | "join">;
}

/**
 * Runs the turn on the engine; when the provider refuses its context as too long, the
 * turn stays open: the context is reduced and the engine goes on from it, until it
 * ends or the runtime refuses to reduce again (docs/compaction.md, recovery).
 */
export async function runTurn(thread: RunThread, parts: RunParts, live: LiveTurn, request: TurnRequest): Promise<TurnEnd> {
  for (;;) {
    const end = await runOnce(thread, parts, live, request);
    if (!end.failure?.windowFull) return end;
    // pi is handed its context for every call: it goes on from the reduced one. An engine
    // with a session of its own gets a new session and the turn's messages again.
    const own = request.engine !== "pi";
    const refusal = await parts.compaction.recover(live.id, own ? "restarted" : "recut");
    if (refusal) {
      live.dropsContext = true;
      const s = thread.state()!;
      // The engine host logged the refused run as window-full, not as the turn's end: this is it.
      const note: TurnEndNote = { threadId: s.id, turnId: live.id, engine: request.engine, model: request.model, class: "session", startedAt: Date.parse(s.turn?.startedAt ?? "") || Date.now() };
      await callEngine(thread.env, "/turn-ends", note).catch(() => {});
      return { outcome: "failed", failure: { class: "session", error: `the context window is full and the runtime could not reduce it (${refusal}): ${end.failure.error}` } };
    }
    const inputs = new Set(live.inputs);
    // The new session is seeded from the reduced context now: the next turn resumes it.
    if (own) await parts.compaction.reseeded();
    const context = thread.tables.context();
    request = own
      ? {
          ...request,
          transcript: viewOf(thread, live.seat, context.filter((h) => !(inputs.has(h.seq) && h.entry.role === "user"))).entries,
          inputs: await engineInputs(thread, live.messages, live.labelled),
          freshSession: true,
        }
      : { ...request, transcript: viewOf(thread, live.seat, context).entries, inputs: [] };
  }
}

/** One run on the engine host: its report stream, each durable report recorded in turn. */
async function runOnce(thread: RunThread, parts: RunParts, live: LiveTurn, request: TurnRequest): Promise<TurnEnd> {
  let response: Response;
  try {
    response = await callEngine(thread.env, "/turns", request);
  } catch (err) {
    return { outcome: "failed", failure: { class: "unknown", error: `the engine host could not be reached: ${(err as Error).message}` } };
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { error?: string; class?: TurnFailure["class"] };
    return {
      outcome: "failed",
      failure: { class: body.class ?? "unknown", error: body.error ?? `the engine host answered ${response.status}` },
    };
  }
  // The kind of the last durable report: a turn that completes right after a tool result
  // stalled (the engine ran a tool and stopped without answering).
  let last: string | null = null;
  // A reply, tool calls and usage that came together: each prepared in order, then all in one commit.
  const appendTogether = async (reports: readonly GroupedReport[]): Promise<void> => {
    const writes: { report: GroupedReport; write: () => Accepted | null; degraded: boolean }[] = [];
    for (const report of reports) {
      if (report.type === "usage") {
        const write = await prepareUsage(thread, live.id, report, () => parts.compaction.noteCall(report, true));
        if (write) writes.push({ report, write: () => (write(), null), degraded: false });
        continue;
      }
      const prepared =
        report.type === "reply"
          ? await prepareTurnEvent(thread, "reply", { turnId: live.id, text: report.text }, { role: "assistant", text: report.text, ...seatField(live.seat) })
          : await prepareTurnEvent(
              thread,
              "tool-call",
              { turnId: live.id, callId: report.callId, name: report.name, input: report.input },
              { role: "tool-call", callId: report.callId, name: report.name, input: report.input, ...seatField(live.seat) },
            );
      writes.push({ report, ...prepared });
    }
    if (writes.length === 0) return;
    const written = await thread.commits.write(() => writes.map((w) => w.write()));
    writes.forEach((w, i) => {
      if (w.report.type === "reply") live.lastReply = { seq: written[i]!.seq, text: w.report.text };
    });
    if (writes.some((w) => w.degraded)) void thread.syncCatalogNow();
  };
  const end = await live.runner.run(response, {
    delta: (frame) => thread.deltas.publish([{ turnId: live.id, ...frame }]),
    durable: async (reports) => {
      for (const r of reports) if (r.type !== "usage") last = r.type;
      const report = reports[0]!;
      if (reports.length > 1 || isGrouped(report)) return appendTogether(reports as GroupedReport[]);
      switch (report.type) {
        case "tool-result": {
          // Capped here, where every engine's results are recorded, so no engine host can send the log more.
          const output = capToolOutput(report.output);
          await recordTurnEvent(
            thread,
            "tool-result",
            { turnId: live.id, callId: report.callId, name: report.name, output, isError: report.isError },
            { role: "tool-result", callId: report.callId, name: report.name, output, isError: report.isError, ...seatField(live.seat) },
          );
          if (thread.tables.unjoinedSteers(live.id).length > 0) await thread.commits.write(() => parts.steering.join(live.id, live.startedSeq, false));
          return;
        }
        case "approval":
          await parts.waits.openWait(live.id, "approval", report.approvalId, "approval-request", {
            turnId: live.id,
            approvalId: report.approvalId,
            callId: report.callId,
            name: report.name,
            input: report.input,
          });
          return;
        case "question":
          await parts.waits.openWait(live.id, "question", report.requestId, "question", {
            turnId: live.id,
            requestId: report.requestId,
            question: report.question,
          });
          return;
        case "compacted":
          // The engine compacted its session on its own, mid-turn.
          await parts.compaction.recordEngineCompaction("engine", report.preTokens);
          return;
        case "steered":
          return parts.steering.take(live, report.seq);
      }
    },
  });
  if (end.outcome === "completed" && last === "tool-result" && !thread.tables.dismissedIn(live.id))
    return { outcome: "failed", failure: { class: "stalled", error: "the engine ended the turn after a tool result without answering" } };
  return end;
}
