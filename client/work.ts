import type { Subscribe } from "../src/api/subscriptions.js";
import type { CycleEvent, GateRequest, GateResult } from "../src/api/cycles.js";
import type { OperationSummary, ReportOperation, StartOperation } from "../src/api/operations.js";
import type { CompactionMode } from "../src/api/compaction.js";
import type { JoinSeat, OfferHandoff, ReplaceSeat } from "../src/api/seats.js";
import type { SpawnSpec } from "../src/api/threads.js";
import { ThreadCalls } from "./threads.js";
import { sleep } from "./transport.js";

/** One child of a parallel step: a delegation's title, prompt and the child's spawn spec. */
export interface ParallelChild {
  title: string;
  prompt: string;
  spec?: SpawnSpec;
}

export interface ParallelResult {
  /** The children that ran, in the order given, each with how it ended. */
  children: { index: number; title: string; operation: string | null; child: string | null; state: OperationSummary["state"]; outcome: OperationSummary["outcome"]; error?: string }[];
  /** The children that never started: a child before them failed. */
  skipped: { index: number; title: string }[];
  gate: GateResult | null;
}

/** A thread's work beside its turns: compaction, operations and the parallel step, subscriptions, gates and merges, seats and handoffs, loops. */
export class WorkCalls extends ThreadCalls {
  /** The context window: tokens in context, the window and its lines, a pending window, the last reduction, recent refusals. */
  compaction(id: string) {
    return this.route("GET /threads/:id/compact", { params: { id } });
  }

  /** Reduces the context now (`mode`, or the runtime's choice); settles a forced window. */
  compact(id: string, mode?: CompactionMode) {
    return this.route("POST /threads/:id/compact", { params: { id }, body: mode ? { mode } : {} });
  }

  /** The thread's operations (delegations, subscription edges, long actions), oldest first (docs/operations.md). */
  operations(id: string) {
    return this.route("GET /threads/:id/operations", { params: { id } });
  }

  operation(id: string, operation: string) {
    return this.route("GET /threads/:id/operations/:operation", { params: { id, operation } });
  }

  /** Starts an operation; a delegation spawns its child and sends it the prompt. */
  startOperation(id: string, body: StartOperation, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/operations", { params: { id }, body, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** A milestone, or the one outcome (a second is refused: `operation-settled`). */
  reportOperation(id: string, operation: string, report: ReportOperation, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/operations/:operation", { params: { id, operation }, body: report, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** Records a cycle event of a review or merge flow. */
  cycleEvent(id: string, event: CycleEvent) {
    return this.route("POST /threads/:id/events", { params: { id }, body: event });
  }

  /** Asks a gate; a refusal is a result (`passed: false`, `reasons`), not an error. */
  gate(id: string, request: GateRequest) {
    return this.route("POST /threads/:id/gate", { params: { id }, body: request });
  }

  /** Merges a child's work into the thread's checkout; again: `alreadyMerged`. */
  merge(id: string, child: string) {
    return this.route("POST /threads/:id/merge", { params: { id }, body: { child } });
  }

  /**
   * A parallel step (SPEC "Client conventions"): each child a delegation of `id`, at most
   * `concurrency` at once: by default the hub's build seat limit when a hub is configured,
   * otherwise all at once. Once a child fails (or is cancelled) no queued child starts; the
   * ones running finish. The gate (`auto` or `human`) sits on the step: it is asked once,
   * over the children that ran, after they all settled.
   */
  async parallel(id: string, children: ParallelChild[], options: { concurrency?: number; gate?: "auto" | "human"; step?: string } = {}): Promise<ParallelResult> {
    const limit = options.concurrency ?? (await this.limits()).hub.buildSeatLimit ?? children.length;
    const queue = children.map((child, index) => ({ child, index }));
    const ran: ParallelResult["children"] = [];
    let failed = false;
    const worker = async () => {
      for (let next = queue.shift(); next && !failed; next = failed ? undefined : queue.shift()) {
        try {
          const started = await this.startOperation(id, { kind: "delegation", title: next.child.title, prompt: next.child.prompt, ...(next.child.spec ? { spec: next.child.spec } : {}) });
          let op = await this.operation(id, started.operation);
          while (op.state === "open") {
            await sleep(Math.min(this.pollMs, 250));
            op = await this.operation(id, started.operation);
          }
          ran.push({ index: next.index, title: next.child.title, operation: op.operation, child: op.child, state: op.state, outcome: op.outcome });
          if (op.state !== "completed") failed = true;
        } catch (err) {
          // A child that could not start (or be followed) fails the step like one that failed.
          ran.push({ index: next.index, title: next.child.title, operation: null, child: null, state: "failed", outcome: null, error: (err as Error).message });
          failed = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, children.length)) }, worker));
    ran.sort((a, b) => a.index - b.index);
    const skipped = children.map((c, index) => ({ index, title: c.title })).filter((c) => !ran.some((r) => r.index === c.index));
    // A child that never started is no operation: the gate hears of it as a failed check.
    const unstarted = ran.flatMap((r) => (r.operation ? [] : [{ name: `start of ${r.title}`, ok: false, ...(r.error ? { detail: r.error.slice(0, 2000) } : {}) }]));
    const gate = options.gate
      ? await this.gate(id, { mode: options.gate, operations: ran.flatMap((r) => (r.operation ? [r.operation] : [])), ...(unstarted.length ? { checks: unstarted } : {}), ...(options.step ? { step: options.step } : {}) })
      : null;
    return { children: ran, skipped, gate };
  }

  /** What the thread watches (docs/subscriptions.md). */
  subscriptions(id: string) {
    return this.route("GET /threads/:id/subscriptions", { params: { id } });
  }

  /** Watches a thread or a workspace's threads: each match wakes this thread with a message. */
  subscribe(id: string, body: Subscribe) {
    return this.route("POST /threads/:id/subscriptions", { params: { id }, body });
  }

  unsubscribe(id: string, watch: string) {
    return this.route("DELETE /threads/:id/subscriptions/:watch", { params: { id, watch } });
  }

  /** The thread's seats and which one holds it (docs/seats.md). */
  seats(id: string) {
    return this.route("GET /threads/:id/seats", { params: { id } });
  }

  /** Joins a seat, under a spawn's rules for its engine and model. */
  joinSeat(id: string, seat: JoinSeat) {
    return this.route("POST /threads/:id/seats", { params: { id }, body: seat });
  }

  /** Changes a seat's engine, model or placement; `changed: false` when nothing differs. */
  replaceSeat(id: string, seat: ReplaceSeat) {
    return this.route("POST /threads/:id/seats/replace", { params: { id }, body: seat });
  }

  /** Removes a seat; answers once its running turn ended (class `closed`). */
  removeSeat(id: string, name: string) {
    return this.route("DELETE /threads/:id/seats/:name", { params: { id, name } });
  }

  /** Offers the thread to another seat; the offer's id is its `fromSeq`. */
  offerHandoff(id: string, offer: OfferHandoff) {
    return this.route("POST /threads/:id/handoff", { params: { id }, body: offer });
  }

  handoffs(id: string) {
    return this.route("GET /threads/:id/handoffs", { params: { id } });
  }

  acceptHandoff(id: string, fromSeq: number) {
    return this.route("POST /threads/:id/handoffs/:fromSeq/accept", { params: { id, fromSeq } });
  }

  declineHandoff(id: string, fromSeq: number) {
    return this.route("POST /threads/:id/handoffs/:fromSeq/decline", { params: { id, fromSeq } });
  }

  loop(id: string) {
    return this.route("GET /threads/:id/loop", { params: { id } });
  }

  startLoop(id: string, body: { prompt: string; maxTurns?: number; until?: string }) {
    return this.route("POST /threads/:id/loop", { params: { id }, body });
  }

  continueLoop(id: string, turns?: number) {
    return this.route("POST /threads/:id/loop/continue", { params: { id }, body: turns === undefined ? {} : { turns } });
  }

  stopLoop(id: string) {
    return this.route("POST /threads/:id/loop/stop", { params: { id } });
  }
}
