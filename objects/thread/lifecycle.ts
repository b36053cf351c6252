import { CODES } from "../../src/api/errors.js";
import { refuse, type Outcome } from "../../src/api/outcome.js";
import type { MessageAccepted } from "../../src/api/threads.js";
import { workspaceOf } from "../../src/platform/stubs.js";
import type { TurnDriver } from "./turn/driver.js";
import { archivedRefusal, missing } from "./refusals.js";
import { restage, type ThreadAccess } from "./thread-access.js";
import type { ThreadState } from "./thread-state.js";

/** What the lifecycle uses of its Thread. */
export type LifecycleThread = Pick<ThreadAccess, "env" | "state" | "change" | "tables" | "saveState">;

/**
 * The thread's row as its workspace sees it: retired and restored (a head gives its
 * workspace's head slot up and claims it back), a head made a chat, the seat lease.
 */
export class Lifecycle {
  constructor(
    private readonly thread: LifecycleThread,
    private readonly turns: Pick<TurnDriver, "reportToParent" | "kick">,
  ) {}

  /** Retires the thread; a retired head gives its workspace's head slot up. */
  async archive(reason: string | null): Promise<Outcome<MessageAccepted>> {
    const retired = (s: ThreadState) => (s.archivedAt ? archivedRefusal(s) : null);
    const outcome = await this.thread.change(
      "archive",
      { reason },
      retired,
      (s, e) => {
        s.archivedAt = e.ts;
        s.archiveReason = reason;
        // A delegation's child retired before it answered: its parent hears that, instead of waiting for ever.
        if (s.delegation && !s.delegation.outcome) s.delegation.outcome = { status: "cancelled", error: `the child was retired before it answered${reason ? `: ${reason}` : ""}` };
      },
      { kind: "thread-archived", reason },
    );
    if (outcome.ok) void this.turns.reportToParent();
    if (outcome.ok && this.thread.state()!.spec.role === "head") await workspaceOf(this.thread.env, this.thread.state()!.spec.workspace).releaseHead(this.thread.state()!.id);
    return outcome;
  }

  /** Restores a retired thread; a head needs its workspace's head slot back (409 if taken meanwhile). */
  async restore(): Promise<Outcome<MessageAccepted>> {
    const s = this.thread.state();
    if (!s) return missing();
    const live = (t: ThreadState) => (t.archivedAt ? null : refuse(409, `thread ${t.id} is not retired`, CODES.threadNotArchived));
    const early = live(s);
    if (early) return early;
    const workspace = workspaceOf(this.thread.env, s.spec.workspace);
    let taken = false;
    if (s.spec.role === "head") {
      const claim = await workspace.claimHead(s.id);
      if (claim.holder)
        return refuse(409, `workspace ${s.spec.workspace} has another head (${claim.holder}) since this one was retired`, CODES.headTaken, { head: claim.holder });
      taken = claim.taken;
    }
    const outcome = await this.thread.change(
      "restore",
      {},
      live,
      (t) => {
        t.archivedAt = null;
        t.archiveReason = null;
      },
      { kind: "thread-restored" },
    );
    if (!outcome.ok && taken) await workspace.releaseHead(s.id);
    // A loop's next prompt may have waited out the retirement.
    if (outcome.ok) this.turns.kick();
    return outcome;
  }

  /** Retires a head to `chat` (the only role change there is), freeing the head slot. */
  async retireHead(): Promise<Outcome<MessageAccepted>> {
    const head = (s: ThreadState) => (s.spec.role === "head" ? null : refuse(409, `thread ${s.id} is not a head`, CODES.notAHead, { role: s.spec.role }));
    const outcome = await this.thread.change("role", { from: "head", to: "chat" }, head, (s) => {
      s.spec = { ...s.spec, role: "chat" };
    });
    if (outcome.ok) await workspaceOf(this.thread.env, this.thread.state()!.spec.workspace).releaseHead(this.thread.state()!.id);
    return outcome;
  }

  async setSeatLease(seatLease: string | null): Promise<Outcome<MessageAccepted>> {
    return this.thread.change("seat-lease", { seatLease }, () => null, (s) => {
      // A seat that lets its thread go ends that thread's work; taking it again reopens it.
      s.leaseReleased = seatLease === null && (s.seatLease !== null || s.leaseReleased === true);
      s.seatLease = seatLease;
      restage(this.thread);
    });
  }
}
