import type { MemoryAlert } from "../../src/api/memory.js";
import type { Outcome } from "../../src/api/outcome.js";
import type { Env } from "../../src/platform/env.js";
import { hostOf } from "../../src/platform/stubs.js";

/**
 * The workspace's memory alert at the Host: a retain that cannot be stored opens it, the
 * next one stored closes it.
 */
export class MemoryAlerts {
  /** Whether this workspace's memory alert is open at the Host: null when not known (after a start, or an RPC that failed). */
  private alertOpen: boolean | null = null;
  /** Alert changes go to the Host one at a time, in the order retains settled, so a late raise cannot undo a later clear. */
  private alertChain: Promise<void> = Promise.resolve();

  constructor(private readonly env: Env) {}

  /** A retain refused: the alert opens with its code and error, and the refusal is the answer. */
  async retainFailed(workspace: string, refusal: Outcome<never>): Promise<Outcome<never>> {
    if (!refusal.ok) {
      const alert: MemoryAlert = { workspace, since: new Date().toISOString(), code: refusal.body.code ?? "", error: refusal.body.error };
      await this.set(workspace, alert);
    }
    return refusal;
  }

  /** Raises or clears the alert at the Host; a clear when it is known closed costs nothing. */
  set(workspace: string, alert: MemoryAlert | null): Promise<void> {
    const change = this.alertChain.then(async () => {
      if (alert === null && this.alertOpen === false) return;
      try {
        await hostOf(this.env).setMemoryAlert(workspace, alert ? JSON.stringify(alert) : null);
        this.alertOpen = alert !== null;
      } catch (err) {
        // Unknown now: the next retain asks the Host again.
        this.alertOpen = null;
        console.error(`workspace ${workspace}: the memory alert could not be ${alert ? "raised" : "cleared"}: ${(err as Error).message}`);
      }
    });
    this.alertChain = change;
    return change;
  }
}
