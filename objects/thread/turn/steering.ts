import type { SteerRequest } from "../../../src/api/engine.js";
import type { SteeringEntry } from "../../../src/api/turns.js";
import { callEngine } from "../../../src/platform/engine-call.js";
import { seatInputs } from "../../../src/rules/seat-view.js";
import type { PreparedEvent } from "../log/event-log.js";
import type { ThreadAccess } from "../thread-access.js";
import type { LiveTurn, TurnSlot } from "./live.js";
import type { TurnTables } from "./tables.js";

/** Why a steering message the engine had not taken when its turn ended goes to the next turn. */
export const UNTAKEN = "the turn ended before the engine took it";

/** Every message sent to steer a running turn, oldest first, and what became of it. */
export function steeringEntries(tables: Pick<TurnTables, "steers">): SteeringEntry[] {
  return tables.steers().map((r) => ({
    seq: r.seq,
    turnId: r.turnId,
    taken: r.state === "pending" ? null : r.state === "taken",
    reason: r.reason,
    resolvedSeq: r.resolvedSeq,
  }));
}

/** What steering uses of its Thread. */
export type SteeringThread = Pick<ThreadAccess, "env" | "log" | "commits" | "tables" | "append" | "state" | "saveState">;

/** What steering uses of the driver: the running turn, and starting the next one. */
export interface SteeringTurns {
  readonly slot: Pick<TurnSlot, "starting" | "start" | "live">;
  kick(): void;
}

/**
 * Messages sent with `onBusy: "steer"`: handed to the running turn's engine, joined to the
 * transcript once it took them, or left to the next turn. Their rows are the turn tables'
 * steering table.
 */
export class Steering {
  constructor(
    private readonly thread: SteeringThread,
    private readonly turns: SteeringTurns,
  ) {}

  /**
   * Hands a message sent with `onBusy: "steer"` to the running turn's engine. The engine
   * reports `steered` once the message joined its conversation; an engine that cannot take
   * it now, or a turn that ended first, leaves it to the next turn (`steered`, `taken: false`).
   */
  async steer(seq: number): Promise<void> {
    if (this.turns.slot.starting) await this.turns.slot.start;
    const row = this.thread.tables.steer(seq);
    if (!row || row.state !== "pending") return;
    const live = this.turns.slot.live;
    let reason = "the turn it was sent to had ended";
    if (live && live.id === row.turnId) {
      const [input] = seatInputs([{ seq, text: row.text, ...(row.from ? { from: row.from } : {}) }], live.labelled);
      const request: SteerRequest = { seq, text: input!.text };
      const res = await callEngine(this.thread.env, `/turns/${live.id}/steer`, request).catch(() => null);
      if (res?.ok) return;
      const said = res ? ((await res.json().catch(() => ({}))) as { error?: string }).error : undefined;
      reason = res ? `the engine could not take it: ${said ?? `it answered ${res.status}`}` : "the engine host could not be reached";
    }
    const prepared = await this.thread.log.prepare("steered", { target: seq, turnId: row.turnId, taken: false, reason });
    await this.thread.commits.write(() => this.settle(row.turnId, prepared, reason, seq));
    this.turns.kick();
  }

  /** The engine took a steering message into the running turn: the turn answers it too. */
  async take(live: LiveTurn, seq: number): Promise<void> {
    const row = this.thread.tables.steer(seq);
    if (!row || row.state !== "pending" || row.turnId !== live.id) return;
    const prepared = await this.thread.log.prepare("steered", { target: seq, turnId: live.id, taken: true });
    await this.thread.commits.write(() => {
      const now = this.thread.tables.steer(seq);
      if (now?.state !== "pending") return;
      const e = this.thread.append(prepared);
      this.thread.tables.closeSteer(seq, "taken", e.seq);
      const from = now.from ? { from: now.from } : {};
      live.inputs.push(seq);
      live.messages.push({ seq, text: now.text, ...from });
      this.thread.state()!.turn?.inputs.push(seq);
      this.thread.saveState();
      this.join(live.id, live.startedSeq, false);
    });
  }

  /**
   * Adds the steering messages the engine took to the transcript, where the next call of
   * any engine would read them: not between a tool call and its result, which providers
   * refuse, so they wait while a call of the turn has no result (`force` at the turn's end,
   * after its calls were settled). Which ones wait is kept in the steering table, so a turn
   * lost to a crash still joins them.
   */
  join(turnId: string, startedSeq: number, force: boolean): void {
    const waiting = this.thread.tables.unjoinedSteers(turnId);
    if (waiting.length === 0 || (!force && this.thread.tables.hasUnanswered(startedSeq))) return;
    for (const s of waiting) {
      this.thread.tables.addEntry(s.seq, { role: "user", text: s.text, ...(s.from ? { from: s.from } : {}) });
      this.thread.tables.markJoined(s.seq);
    }
  }

  /**
   * Inside a commit: the turn's steering messages the engine did not take (all of them, or
   * only `only`) go to the next turn, each with a `steered` event (`taken: false`) written
   * from `template`.
   */
  settle(turnId: string, template: PreparedEvent, reason: string, only?: number): void {
    for (const row of this.thread.tables.steers(turnId)) {
      if (only !== undefined && row.seq !== only) continue;
      const e = this.thread.append({ ...template, text: JSON.stringify({ target: row.seq, turnId, taken: false, reason }) });
      this.thread.tables.closeSteer(row.seq, "not-taken", e.seq, reason);
      this.thread.tables.queue(row.seq, row.text, row.from ?? undefined, row.seat ?? undefined);
    }
  }
}
