import type { TurnRequest } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import { RUNTIME_SENDER } from "../../../src/api/turns.js";
import { ok } from "../../../src/api/outcome.js";
import { hostOf } from "../../../src/platform/stubs.js";
import { withMentions } from "../../../src/rules/attachments.js";
import { seatField } from "../../../src/rules/seat-view.js";
import { newId } from "../../../src/shared/ids.js";
import { RECOVERING, type Compaction } from "../compaction/compaction.js";
import type { StoredEvent } from "../log/event-log.js";
import { restage, type ThreadAccess } from "../thread-access.js";
import { runKey, seatModel, seatNamed, type ThreadState } from "../thread-state.js";
import type { TurnEnding } from "./end.js";
import { engineInputs, viewOf, withRecall } from "./inputs.js";
import type { LiveTurn, TurnSlot } from "./live.js";
import { runTurn, type RunParts, type RunThread } from "./run.js";
import { sessionPlace } from "./request.js";
import { TurnRunner, type TurnEnd } from "./runner.js";
import type { Elsewhere, Routed } from "./tables.js";

/** What a turn's start uses of its Thread. */
export type StartThread = RunThread & Pick<ThreadAccess, "config" | "reschedule">;

/** The parts a turn's start reaches: compaction before it, the run, the end after it. */
export interface StartParts extends RunParts {
  readonly compaction: RunParts["compaction"] & Pick<Compaction, "beforeTurn" | "exclusive" | "takeReseed" | "engineWindow">;
  readonly ending: Pick<TurnEnding, "finish" | "endPlainly">;
  route(named: string | null, from: string | null): Routed;
}

/** How many wakes led to a message (0 for one no subscription sent). */
function wakeDepthOf(row: StoredEvent | null): number {
  if (row?.kind !== "message" || row.body === null) return 0;
  return (JSON.parse(row.body) as { wake?: { depth: number } }).wake?.depth ?? 0;
}

/**
 * The start of a turn: the queued messages taken in one commit (`turn-started`), the
 * request the engine gets, and the run, whose end is the turn's end.
 */
export class TurnStart {
  constructor(
    private readonly thread: StartThread,
    private readonly parts: StartParts,
    private readonly slot: Pick<TurnSlot, "live" | "keptAt" | "nudgedLoop" | "answerWaiters">,
  ) {}

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  /** Starts a turn and returns once it runs; the turn ends on its own (TurnEnding.finish), which kicks the next. */
  async start(): Promise<void> {
    const s = this.state!;
    const env = this.thread.env;
    // Registered first: a crash after the turn is marked running must find it on boot.
    await hostOf(env).turnStarted(s.id);
    try {
      // A forced window waits here for a caller's choice, with the messages still queued.
      await this.parts.compaction.beforeTurn();
      // Between reductions, never during one: an engine's session is not compacted and resumed at once.
      await this.parts.compaction.exclusive(() => this.launch(s));
    } catch (err) {
      // The messages are still queued and will be retried: the thread stays in the index.
      if (this.thread.tables.queued() === 0) await hostOf(env).turnEnded(s.id).catch(() => {});
      throw err;
    }
  }

  private async launch(s: ThreadState): Promise<void> {
    const env = this.thread.env;
    const turnId = newId("turn_");
    const prepared = await this.thread.prepareOrRefuse("turn-started", { turnId, index: s.turns + 1, inputs: [] });
    if (!prepared.ok) throw new Error(prepared.body.error);
    // Written only if the turn finds its engine's session too full to resume (a forced window reduced it).
    const skipped = await this.thread.log.prepare("system", { level: "info", text: RECOVERING("resume-skipped"), turnId });
    let elsewhere: Elsewhere[] = [];
    const started = await this.thread.commits.write(() => {
      if (this.state!.turn || this.state!.degraded) return null;
      const now = this.state!;
      const next = this.thread.tables.takeNext((named, from) => this.parts.route(named, from));
      elsewhere = next.elsewhere;
      for (const m of elsewhere) this.addElsewhere(m);
      if (next.inputs.length === 0) return null;
      const inputs = next.inputs;
      const seat = seatNamed(now, next.seat!)!;
      const model = seatModel(now, seat);
      const view = viewOf(this.thread, seat.name, this.thread.tables.context());
      // Known before the turn's first event: that event, and every one after, carries it on (a wake loop is cut by it).
      const wakeDepth = Math.max(0, ...inputs.map((i) => wakeDepthOf(this.thread.log.get(i.seq))));
      const body = { turnId, index: now.turns + 1, inputs: inputs.map((i) => i.seq), seat: seat.name, ...model, ...(wakeDepth > 0 ? { wakeDepth } : {}) };
      // The inputs are only known inside the commit; a list of seqs is never a large body.
      const e = this.thread.append({ ...prepared.value, text: JSON.stringify(body) });
      // Marked running at once: what the turn writes from here on carries its wake depth.
      now.turn = { id: turnId, index: body.index, startedAt: e.ts, inputs: body.inputs, seat: seat.name, ...(wakeDepth > 0 ? { wakeDepth } : {}) };
      const reseed = this.parts.compaction.takeReseed();
      if (reseed === "forced" && model.engine !== "pi") this.thread.append(skipped);
      for (const input of inputs)
        this.thread.tables.addEntry(input.seq, { role: "user", text: withMentions(input.text, input.seq, this.thread.tables.attachments(input.seq)), ...(input.from ? { from: input.from } : {}) });
      // An engine resumes its own session only after a turn of the same seat on the same model:
      // another seat's turns are not in that session, and another model would meet what the
      // first one bound to itself (thinking signatures, encrypted reasoning) and refuse it.
      const key = runKey(now, seat);
      const switched = now.lastRun !== undefined && now.lastRun !== key;
      now.lastRun = key;
      // A finished reviewer or fixer thread that takes work again is no longer finished.
      now.leaseReleased = false;
      now.turns = body.index;
      restage(this.thread);
      return { inputs, seat, model, view, index: body.index, seq: e.seq, freshSession: reseed !== false || switched };
    });
    // `/send` for a message a peer's seat answers hears so now: no turn here will.
    for (const m of elsewhere)
      this.slot.answerWaiters([m.seq], ok({ turnId: null, outcome: "queued", failure: null, reply: null, queuedBecause: { code: CODES.seatElsewhere, error: `seat ${m.seat} works on a peer (${seatNamed(this.state!, m.seat)?.placement}): its answer is recorded here when it comes` } }));
    if (!started) {
      await hostOf(env).turnEnded(s.id);
      return;
    }
    this.slot.keptAt = Date.now();
    void this.thread.reschedule();
    void this.thread.syncCatalogNow();
    const runner = new TurnRunner(turnId);
    let settle!: (end: TurnEnd) => void;
    const live: LiveTurn = {
      id: turnId,
      index: started.index,
      startedSeq: started.seq,
      inputs: started.inputs.map((i) => i.seq),
      messages: started.inputs,
      seat: started.seat.name,
      labelled: started.view.labelled,
      // A nudge after a stalled loop turn is still that loop's turn.
      loopTurn: started.inputs.some((i) => i.from === "loop") || (this.slot.nudgedLoop && started.inputs.some((i) => i.from === RUNTIME_SENDER)),
      dropsContext: false,
      runner,
      lastReply: null,
      done: new Promise<TurnEnd>((resolve) => (settle = resolve)),
    };
    this.slot.live = live;
    const active = started.model;
    const request: TurnRequest = {
      turnId,
      threadId: s.id,
      ...active,
      ...sessionPlace(this.thread.config, s.spec, active),
      transcript: started.view.entries,
      freshSession: started.freshSession,
      window: this.parts.compaction.engineWindow(),
      inputs: await withRecall(this.thread, live, await engineInputs(this.thread, started.inputs, started.view.labelled)),
      // Only the seat that holds the thread can offer it.
      handoffTo:
        this.state!.holder === started.seat.name
          ? this.state!.seats.filter((x) => x.state === "active" && x.name !== started.seat.name).map((x) => ({ name: x.name, role: x.role }))
          : [],
      delegated: this.state!.delegation !== undefined && this.state!.delegation.outcome === null,
      ...(s.spec.pr?.room ? { room: s.spec.pr.room } : {}),
    };
    void runTurn(this.thread, this.parts, live, request)
      .catch((err: unknown): TurnEnd => ({ outcome: "failed", failure: { class: "unknown", error: `the turn broke: ${(err as Error).message}` } }))
      .then(async (end) => {
        try {
          await this.parts.ending.finish(live, end);
        } catch (err) {
          console.error(`thread ${s.id}: turn ${turnId} could not be ended as reported:`, err);
          await this.parts.ending.endPlainly(live, err as Error);
        } finally {
          settle(end);
        }
      });
  }

  /** A message for a seat placed on a peer joins the transcript at once: no turn here answers it. */
  private addElsewhere(m: Elsewhere): void {
    this.thread.tables.addEntry(
      m.seq,
      m.own
        ? { role: "assistant", text: m.text, ...seatField(m.seat) }
        : { role: "user", text: withMentions(m.text, m.seq, this.thread.tables.attachments(m.seq)), ...(m.from ? { from: m.from } : {}) },
    );
  }}
