import type { ArmDrain } from "../src/api/drain.js";
import { Transport } from "./transport.js";

/** The operator's routes: the host's limits and incidents, accounts and access tokens, the drain, the spawn pause, attention. */
export class OperatorCalls extends Transport {
  /** The host's limits, with the hub's build seat limit when a hub is configured. */
  limits() {
    return this.route("GET /limits", {});
  }

  incidents(since = 0) {
    return this.route("GET /incidents", { query: { since } });
  }

  accounts() {
    return this.route("GET /accounts", {});
  }

  accessToken(account: string) {
    return this.route("POST /accounts/:id/access-token", { params: { id: account } });
  }

  /** Clears an account's spent engine_b allowance (after buying credit). Local callers only: the runtime refuses it through a browser or a non-loopback Host. */
  resetEngineBCredit(account: string) {
    return this.route("POST /accounts/:id/engine-b/credit-reset", { params: { id: account } });
  }

  /** Clears the provider's refusal of `model` recorded against an account. Local callers only, as above. */
  clearModelRefusal(account: string, model: string) {
    return this.route("DELETE /accounts/:id/model-refusals/:model", { params: { id: account, model } });
  }

  drain() {
    return this.route("GET /drain", {});
  }

  armDrain(body: ArmDrain = {}) {
    return this.route("POST /drain", { body });
  }

  /** Disarms the drain; with `owner`, releases that owner's claim. */
  disarmDrain(owner?: string) {
    return owner === undefined ? this.route("DELETE /drain", {}) : this.route("DELETE /drain/claim", { query: { owner } });
  }

  spawnPause() {
    return this.route("GET /keeper/spawn-pause", {});
  }

  clearSpawnPause(reason: string) {
    return this.route("POST /keeper/spawn-pause/clear", { body: { reason } });
  }

  attention() {
    return this.route("GET /attention", {});
  }

  attentionChanges(after: number | string = 0) {
    return this.route("GET /attention/changes", { query: { after } });
  }
}
