import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ClientNotification, ParamsOf, RequestId, RequestMethod, Responses, ServerNotification, ServerRequest, ServerResponses } from "./types.js";

type Message = { id?: RequestId; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } };

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * JSON-RPC 2.0 without the `"jsonrpc"` field, one object a line, as `codex app-server`
 * speaks it on stdio. The server's own requests (approvals) carry ids from a counter of
 * its own, so they are told apart from answers by having a `method`. Requests, answers
 * and notifications are typed from the protocol generated for the pinned release.
 */
export class AppServerRpc {
  private next = 1;
  private readonly pending = new Map<RequestId, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private closedWith: Error | null = null;

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    onNotification: (n: ServerNotification) => void,
    onRequest: (r: ServerRequest) => void,
  ) {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let m: Message;
      try {
        m = JSON.parse(line) as Message;
      } catch {
        return;
      }
      if (m.method !== undefined) {
        // The one place a line is taken for what the pinned server sends: the handlers
        // switch on `method`, and a method they do not know falls through untouched.
        // A message this binding cannot handle must not take the front down with it.
        try {
          if (m.id !== undefined) onRequest(m as ServerRequest);
          else onNotification(m as ServerNotification);
        } catch (err) {
          console.error(`engine_b: could not handle ${m.method}: ${(err as Error).message}`);
        }
      } else if (m.id !== undefined) {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error) p?.reject(new RpcError(m.error.code, m.error.message));
        else p?.resolve(m.result);
      }
    });
    child.on("exit", (code, signal) => this.fail(new Error(`codex app-server exited (${signal ?? code})`)));
    child.on("error", (err) => this.fail(new Error(`codex app-server could not run: ${err.message}`)));
    child.stdin.on("error", (err) => this.fail(err));
  }

  request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<Responses[M]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.next++;
    return new Promise<Responses[M]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.send({ id, method, params });
    });
  }

  notify(n: ClientNotification): void {
    this.send(n);
  }

  respond<M extends keyof ServerResponses>(request: { method: M; id: RequestId }, result: ServerResponses[M]): void {
    this.send({ id: request.id, result });
  }

  refuse(request: ServerRequest, message: string): void {
    this.send({ id: request.id, error: { code: -32601, message } });
  }

  private send(m: Message): void {
    if (!this.closedWith) this.child.stdin.write(`${JSON.stringify(m)}\n`);
  }

  private fail(err: Error): void {
    if (this.closedWith) return;
    this.closedWith = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
