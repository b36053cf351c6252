import type { RouteInput } from "./routes.js";
import type { ErrorBody } from "../src/api/errors.js";
import type { ForwardPage, ReversePage } from "../src/api/tail.js";
import type { PostMessage, SpawnSpec } from "../src/api/threads.js";
import type { ApprovalResolved, ForkBody, SendMessage, SendResult } from "../src/api/turns.js";
import { OperatorCalls } from "./operator.js";
import { RuntimeError } from "./transport.js";

/** The spawn spec as the client library types it. */
export type ClientSpawnSpec = Omit<SpawnSpec, "engine"> & { engine?: "engine_a" | "pi" };

/** An interrupted turn, as `interrupt` answers. */
export type TurnOutcome = Omit<SendResult, "seq" | "ts">;

/** A second answer to an approval is not an error: the runtime says it was already closed, and how. */
export type ApprovalAnswer = ApprovalResolved | { code: "approval-closed"; error: string; approvalId: string; decision: string };

/** Threads and their turns: spawn, messages, send, the log's pages, approvals, questions, retire and restore. */
export class ThreadCalls extends OperatorCalls {
  /** Whether the runtime serves, and whether sessions can run: the sandbox and each engine, with why not and what to run. */
  health() {
    return this.route("GET /health", {});
  }

  /**
   * The spawn's engine type lists only `engine_a` and `pi` (SPEC "Versioning" 5): the
   * runtime accepts `engine_b` too, for callers that name it on purpose over HTTP.
   */
  spawn(spec: ClientSpawnSpec = {}) {
    return this.route("POST /spawn", { body: spec });
  }

  thread(id: string) {
    return this.route("GET /threads/:id", { params: { id } });
  }

  list(query: RouteInput<"GET /threads">["query"] = {}) {
    return this.route("GET /threads", { query });
  }

  post(id: string, message: PostMessage, options: { idempotencyKey?: string } = {}) {
    return this.route("POST /threads/:id/messages", { params: { id }, body: message, headers: options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {} });
  }

  /** Sends a message and waits until the turn that answers it ended (or was queued: 202 with `queuedBecause`). */
  async send(id: string, message: Omit<SendMessage, "async">): Promise<SendResult> {
    const answer = await this.route("POST /threads/:id/send", { params: { id }, body: message });
    // Without `async`, a 202 is a queued turn's result, never the bare `{seq, ts}` an async send gets.
    if (!("outcome" in answer)) throw new RuntimeError("decode", `POST /threads/${id}/send: a send that waits answered no outcome`);
    return answer;
  }

  turn(id: string) {
    return this.route("GET /threads/:id/turn", { params: { id } });
  }

  interrupt(id: string) {
    return this.route("POST /threads/:id/interrupt", { params: { id } });
  }

  /** The thread's attachments, oldest first (each message's `attachments`). */
  attachments(id: string) {
    return this.route("GET /threads/:id/attachments", { params: { id } });
  }

  /** One attachment's bytes and media type, by its hash. */
  async attachment(id: string, sha256: string): Promise<{ mediaType: string; bytes: Uint8Array }> {
    const path = `/threads/${id}/attachments/${sha256}`;
    const res = await this.request("GET", path);
    if (!res.ok) {
      const err = (await res.json().catch(() => ({}))) as ErrorBody;
      throw new RuntimeError("rejected", err.error ?? `GET ${path}: ${res.status}`, res.status, err.code, err);
    }
    return { mediaType: res.headers.get("content-type") ?? "application/octet-stream", bytes: new Uint8Array(await res.arrayBuffer()) };
  }

  /** Every message sent to steer a running turn, oldest first, and whether the engine took it. */
  steering(id: string) {
    return this.route("GET /threads/:id/steering", { params: { id } });
  }

  /** Allows or denies the tool call an `approval-request` event names by `approvalId`. */
  approve(id: string, approvalId: string, decision: "allow" | "deny") {
    return this.route("POST /threads/:id/approvals/:approvalId", { params: { id, approvalId }, body: { decision } });
  }

  question(id: string, requestId: string) {
    return this.route("GET /threads/:id/questions/:requestId", { params: { id, requestId } });
  }

  answer(id: string, requestId: string, answer: string) {
    return this.route("POST /threads/:id/questions/:requestId/answer", { params: { id, requestId }, body: { answer } });
  }

  dismiss(id: string, requestId: string) {
    return this.route("POST /threads/:id/questions/:requestId/dismiss", { params: { id, requestId } });
  }

  continueWithoutAnswer(id: string, requestId: string) {
    return this.route("POST /threads/:id/questions/:requestId/continue", { params: { id, requestId } });
  }

  recover(id: string, reason: string) {
    return this.route("POST /threads/:id/recover", { params: { id }, body: { acknowledgeHistoryGap: true, reason } });
  }

  fork(id: string, body: ForkBody) {
    return this.route("POST /threads/:id/fork", { params: { id }, body });
  }

  tail(id: string, query: { after?: number | string; limit?: number; wait?: number }): Promise<ForwardPage>;
  tail(id: string, query: { before: number | string | "latest"; limit?: number }): Promise<ReversePage>;
  tail(id: string, query: Record<string, string | number | undefined>) {
    return this.route("GET /threads/:id/tail", { params: { id }, query });
  }

  archive(id: string, reason?: string) {
    return this.route("DELETE /threads/:id", { params: { id }, query: { reason: reason || undefined } });
  }

  restore(id: string) {
    return this.route("POST /threads/:id/restore", { params: { id } });
  }

  /** Generates an interface for the thread (docs/ui.md): the model's when `SERVICE_UI_MODEL` is set, else the template's; `source` picks one. */
  generateInterface(id: string, body: RouteInput<"POST /threads/:id/ui/generate">["body"] = {}) {
    return this.route("POST /threads/:id/ui/generate", { params: { id }, body });
  }
}
