import type { WindowTrigger } from "../../../src/api/compaction.js";
import type { TurnRequest } from "../../../src/api/engine.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { newId } from "../../../src/shared/ids.js";
import type { ThreadAccess } from "../thread-access.js";
import { activeModel, runKey, seatNamed } from "../thread-state.js";
import { recordUsage } from "../turn/events.js";
import { sessionPlace } from "../turn/request.js";
import { TurnRunner } from "../turn/runner.js";
import type { WindowRecords } from "./records.js";
import type { Recorded, WindowMeter } from "./window.js";

/** What asking the engine uses of its Thread: the engine host, and the usage events its call records. */
export type EngineThread = Pick<ThreadAccess, "env" | "config" | "state" | "prepareOrRefuse" | "commits" | "append" | "saveState">;

/**
 * Asks the thread's engine to compact its own session: the `window` it recorded, or why
 * it did not. Bounded by the curator's timeout (twice: the engine's process starts first).
 */
export async function askEngine(
  thread: EngineThread,
  meter: Pick<WindowMeter, "engineWindow" | "noteCall">,
  records: Pick<WindowRecords, "recordEngineCompaction" | "round">,
  trigger: WindowTrigger,
  turn: number,
): Promise<Recorded | string> {
  const c = thread.config;
  const s = thread.state()!;
  const active = activeModel(s);
  // The engine's session is the last turn's seat's: the holder's next turn starts a new
  // one anyway when that was another seat or model (docs/seats.md), so there is nothing to compact.
  const holder = seatNamed(s, s.holder)!;
  if (s.lastRun !== undefined && s.lastRun !== runKey(s, holder)) return `the engine's session is another seat's or model's (${s.lastRun.split("|")[0]}), not seat ${holder.name}'s`;
  const id = newId("cmp_");
  const request: TurnRequest = {
    turnId: id,
    threadId: s.id,
    ...active,
    ...sessionPlace(c, s.spec, active),
    transcript: [],
    freshSession: false,
    window: meter.engineWindow(),
    inputs: [],
    handoffTo: [],
    delegated: false,
    compact: true,
  };
  let response: Response;
  try {
    response = await callEngine(thread.env, "/turns", request);
  } catch (err) {
    return `the engine host could not be reached: ${(err as Error).message}`;
  }
  if (!response.ok) return ((await response.json().catch(() => ({}))) as { error?: string }).error ?? `the engine host answered ${response.status}`;
  let window: Recorded | null = null;
  const runner = new TurnRunner(id);
  const limit = 2 * c.curatorTimeoutMs;
  const timer = setTimeout(() => runner.cancel({ class: "session", error: `the engine's compaction did not end within ${limit} ms` }), limit);
  const end = await runner.run(response, {
    delta: () => {},
    durable: async (reports) => {
      for (const report of reports)
        if (report.type === "usage") await recordUsage(thread, id, report, () => meter.noteCall(report, false));
        else if (report.type === "compacted") window = await records.recordEngineCompaction(trigger, report.preTokens);
    },
  });
  clearTimeout(timer);
  if (!window) return end.failure?.error ?? "the engine ended without compacting";
  await records.round(turn);
  return window;
}
