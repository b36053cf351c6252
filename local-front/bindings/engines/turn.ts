import { constants } from "node:os";
import type { ApprovalDecision, EngineReport, QuestionReply, SteerRequest, TurnFailure, TurnStop } from "../../../src/api/engine.js";

/** A turn an engine is running, as the engine host drives it. */
export interface EngineTurn {
  /** Settles after the turn's `end` report was emitted. */
  done: Promise<void>;
  /** False when the engine waits on no such approval. `expired`: a deny nobody gave, the approval's timeout passed. */
  decide(approvalId: string, decision: ApprovalDecision | "expired"): boolean;
  /** False when the engine waits on no such question. */
  reply(requestId: string, answer: QuestionReply): boolean;
  /**
   * Hands the running turn a message to steer it: true once the engine has it queued (it
   * emits `steered` when the message joins the conversation), false when it cannot take
   * one now (the turn is not running yet, or is ending).
   */
  steer(message: SteerRequest): Promise<boolean>;
  interrupt(): void;
}

/** What a model is told of a call it was refused: by a person, or by an approval nobody answered in time. */
export function refusalText(decision: "deny" | "expired", tool: string): string {
  return decision === "deny" ? `the person denied this ${tool} call; it was not run` : `nobody answered the approval for this ${tool} call in time; it was not run`;
}

/** How every engine reports a turn a person interrupted. */
export const INTERRUPTED: TurnFailure = { class: "interrupted", error: "interrupted by a person" };

/**
 * How a process ended, in words: by a signal, or with an exit status. A status above 128
 * also names the signal it stands for: the sandbox's bwrap and loopback forwarder pass a
 * killed child's death on as 128 + the signal's number.
 */
export function processEnd(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  const name = code !== null && code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return `exited with status ${code ?? "unknown"}${name ? ` (128 + ${name}: killed by ${name})` : ""}`;
}

/**
 * A turn whose engine process died under it (killed, crashed, out of memory): a session
 * fault, not an unclassified one; the next turn starts a new process and resumes the session.
 */
export function engineDied(what: string, code: number | null, signal: NodeJS.Signals | null): TurnFailure {
  return { class: "session", error: `${what} ${processEnd(code, signal)} during the turn` };
}

/** How a turn's run settled: it failed, it completed, or it completed because the output limit cut its answer. */
export type RunOutcome = TurnFailure | null | { stop: TurnStop };

/** Emits a turn's `end` report from how its run settled. */
export function reportEnd(
  run: Promise<RunOutcome>,
  emit: (r: EngineReport) => void,
  crashed: (err: Error) => TurnFailure,
): Promise<void> {
  return run.then(
    (outcome) =>
      emit(
        outcome === null
          ? { type: "end", outcome: "completed" }
          : "stop" in outcome
            ? { type: "end", outcome: "completed", stop: outcome.stop }
            : { type: "end", outcome: "failed", failure: outcome },
      ),
    (err: unknown) => emit({ type: "end", outcome: "failed", failure: crashed(err as Error) }),
  );
}

/** What an engine waits on from a person (approvals, answers), by id. */
export class Waiting<T> {
  private readonly settlers = new Map<string, (value: T) => void>();

  /** Resolves with the person's answer, or with `onAbort` once `signal` aborts. */
  wait(id: string, signal?: AbortSignal, onAbort?: T): Promise<T> {
    return new Promise<T>((resolve) => {
      const settle = (v: T) => {
        this.settlers.delete(id);
        resolve(v);
      };
      this.settlers.set(id, settle);
      if (signal && onAbort !== undefined) {
        if (signal.aborted) settle(onAbort);
        signal.addEventListener("abort", () => settle(onAbort), { once: true });
      }
    });
  }

  /** False when nothing waits on this id. */
  settle(id: string, value: T): boolean {
    const settle = this.settlers.get(id);
    settle?.(value);
    return settle !== undefined;
  }

  settleAll(value: T): void {
    for (const settle of [...this.settlers.values()]) settle(value);
  }
}
