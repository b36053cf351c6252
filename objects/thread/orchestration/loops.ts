import type { TurnFailure } from "../../../src/api/engine.js";
import { CODES } from "../../../src/api/errors.js";
import type { EventBodies } from "../../../src/api/events.js";
import { LOOP_DEFAULT_TURNS, LOOP_SENDER, type LoopState } from "../../../src/api/turns.js";
import type { PreparedEvent } from "../log/event-log.js";
import { loopAfterTurn } from "./loop-step.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { archivedRefusal, degradedRefusal, missing, recordOnlyRefusal } from "../refusals.js";
import type { ThreadAccess } from "../thread-access.js";
import type { ThreadState } from "../thread-state.js";

/** A loop's next state after a turn and its events, prepared before the commit that writes them. */
export interface LoopStep {
  loop: LoopState;
  event: PreparedEvent | null;
  again: PreparedEvent | null;
}

/** A thread's loop: one prompt queued again after each of its turns, until a stop rule or a person stops it. */
export class Loops {
  constructor(
    private readonly thread: Pick<ThreadAccess, "append" | "change" | "commits" | "log" | "prepareOrRefuse" | "saveState" | "state" | "tables">,
    private readonly kick: () => void,
  ) {}

  private get state(): ThreadState | null {
    return this.thread.state();
  }

  loopState(): Outcome<{ loop: LoopState | null }> {
    return this.state ? ok({ loop: this.state.loop }) : missing();
  }

  async startLoop(prompt: string, maxTurns: number | undefined, until: string | undefined): Promise<Outcome<LoopState>> {
    const recordOnly = this.state ? recordOnlyRefusal(this.state) : null;
    if (recordOnly) return recordOnly;
    const turns = maxTurns ?? LOOP_DEFAULT_TURNS;
    const running = (s: ThreadState) =>
      s.archivedAt
        ? archivedRefusal(s)
        : s.degraded
          ? degradedRefusal(s)
          : s.loop?.status === "running"
            ? refuse(409, "a loop is already running on this thread; stop it first", CODES.loopRunning)
            : null;
    return this.loopChange("loop-started", { prompt, maxTurns: turns, until: until ?? null }, running, (s) => {
      s.loop = { status: "running", prompt, maxTurns: turns, until: until ?? null, done: 0, reason: null };
    });
  }

  async continueLoop(more: number | undefined): Promise<Outcome<LoopState>> {
    const resumable = (s: ThreadState) =>
      !s.loop
        ? refuse(404, "thread has no loop", CODES.loopNotFound)
        : s.loop.status === "running"
          ? refuse(409, "the loop is running", CODES.loopRunning)
          : s.archivedAt
            ? archivedRefusal(s)
            : s.degraded
              ? degradedRefusal(s)
              : null;
    const turns = more ?? this.state?.loop?.maxTurns ?? LOOP_DEFAULT_TURNS;
    return this.loopChange("loop-continued", { turns }, resumable, (s) => {
      const loop = s.loop!;
      s.loop = { ...loop, status: "running", reason: null, maxTurns: loop.done + turns };
    });
  }

  async stopLoop(): Promise<Outcome<LoopState>> {
    if (!this.state) return missing();
    const running = (s: ThreadState) =>
      s.loop?.status === "running" ? null : refuse(409, "no loop is running on this thread", CODES.loopNotRunning);
    const outcome = await this.thread.change("loop-stopped", { reason: "stopped" }, running, (s) => {
      s.loop = { ...s.loop!, status: "stopped", reason: "stopped" };
    });
    return outcome.ok ? ok(this.state.loop!) : outcome;
  }

  /** Starts or resumes a loop: the change, and the loop's prompt queued as its next message. */
  private async loopChange<K extends "loop-started" | "loop-continued">(
    kind: K,
    body: EventBodies[K],
    refusal: (s: ThreadState) => Outcome<never> | null,
    apply: (s: ThreadState) => void,
  ): Promise<Outcome<LoopState>> {
    if (!this.state) return missing();
    const early = refusal(this.state);
    if (early) return early;
    const prompt = kind === "loop-started" ? (body as EventBodies["loop-started"]).prompt : this.state.loop!.prompt;
    const change = await this.thread.prepareOrRefuse(kind, body);
    if (!change.ok) return change;
    const message = await this.thread.prepareOrRefuse("message", { text: prompt, from: LOOP_SENDER });
    if (!message.ok) return message;
    const outcome = await this.thread.commits.write((): Outcome<LoopState> => {
      const late = refusal(this.state!);
      if (late) return late;
      this.thread.append(change.value);
      apply(this.state!);
      this.thread.saveState();
      // Queued even while another turn runs: only a turn that answers the loop's own
      // prompt counts as one of its turns (see prepareLoopStep).
      this.queueLoopPrompt(message.value);
      return ok(this.state!.loop!);
    });
    if (outcome.ok) this.kick();
    return outcome;
  }

  /**
   * What a loop does after one of its turns (a turn that answered its prompt): stop (and
   * why), or queue its prompt again. Other turns (a person's message) leave it alone.
   */
  async prepareLoopStep(reply: string | null, failure: TurnFailure | null, loopTurn: boolean): Promise<LoopStep | null> {
    const loop = this.state!.loop;
    if (loop?.status !== "running" || !loopTurn) return null;
    const next = loopAfterTurn(loop, failure, reply);
    if (next.stop) {
      const stopped = await this.thread.log.prepare("loop-stopped", { reason: next.stop });
      return { loop: next.loop, event: stopped, again: null };
    }
    const again = await this.thread.log.prepare("message", { text: loop.prompt, from: LOOP_SENDER });
    return { loop: next.loop, event: null, again };
  }

  applyLoopStep(step: LoopStep | null): void {
    if (!step) return;
    // A stop asked for while the turn ran wins over the step computed before it.
    if (this.state!.loop?.status !== "running") return;
    this.state!.loop = step.loop;
    if (step.event) this.thread.append(step.event);
    if (step.again) this.queueLoopPrompt(step.again);
  }

  /** At most one prompt waits at a time: a stop and a continue during one turn must not queue two. */
  private queueLoopPrompt(prepared: PreparedEvent): void {
    if (this.thread.tables.hasQueuedFrom(LOOP_SENDER)) return;
    const e = this.thread.append(prepared);
    this.thread.tables.queue(e.seq, this.state!.loop!.prompt, LOOP_SENDER);
  }
}
