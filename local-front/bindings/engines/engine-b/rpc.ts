import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { processEnd } from "../turn.js";
import type { ClientNotification, ParamsOf, RequestId, RequestMethod, Responses, ServerNotification, ServerRequest, ServerResponses } from "./types.js";

type Message = { id?: RequestId; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } };

/**
 * The one boundary where what codex writes is taken, unchecked, for what the protocol
 * generated from the pinned release says it writes: a server request or notification by
 * its `method`, an answer's result as the response to the method its id was sent with.
 * Past it everything is typed; a method this binding does not know falls through the
 * handlers' switches, and a handler's fault is caught by the line handler below.
 */
function asPinnedProtocol<T>(received: unknown): T {
  return received as T;
}

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
        const parsed: unknown = JSON.parse(line);
        if (typeof parsed !== "object" || parsed === null) return;
        m = parsed;
      } catch {
        return;
      }
      if (typeof m.method === "string") {
        // A message this binding cannot handle must not take the front down with it.
        try {
          if (m.id !== undefined) onRequest(asPinnedProtocol<ServerRequest>(m));
          else onNotification(asPinnedProtocol<ServerNotification>(m));
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
    child.on("exit", (code, signal) => this.fail(new Error(`codex app-server ${processEnd(code, signal)}`)));
    child.on("error", (err) => this.fail(new Error(`codex app-server could not run: ${err.message}`)));
    child.stdin.on("error", (err) => this.fail(err));
  }

  request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<Responses[M]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.next++;
    return new Promise<Responses[M]>((resolve, reject) => {
      this.pending.set(id, { resolve: (result) => resolve(asPinnedProtocol<Responses[M]>(result)), reject });
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
