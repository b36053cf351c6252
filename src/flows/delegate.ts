import type { OperationAccepted, StartOperation } from "../api/operations.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import type { SpawnSpec, ThreadRow } from "../api/threads.js";
import { valueOf } from "../http/answer.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { threadOf } from "../platform/stubs.js";
import { newId } from "../shared/ids.js";
import { createThread } from "./create-thread.js";
import { sharedWorktree } from "../rules/spawn.js";

/**
 * `POST /threads/:id/operations`. An action or a subscription edge is recorded on the
 * thread. A delegation spawns its child first (its `parent` the delegating thread, in the
 * parent's workspace and working directory unless its spec says otherwise, with a
 * spawn's every rule), records the operation naming it, then sends it the prompt; the
 * child's first turn's end settles the operation (objects/thread/turn/driver.ts).
 */
export async function startOperation(env: Env, config: RuntimeConfig, parentId: string, body: StartOperation, idempotencyKey?: string): Promise<Outcome<OperationAccepted>> {
  const parent = threadOf(env, parentId);
  const idempotency = idempotencyKey ? { key: idempotencyKey, request: JSON.stringify(body) } : undefined;
  const detail = body.detail ? { detail: JSON.stringify(body.detail) } : {};
  if (body.kind !== "delegation") return (await parent.startOperation({ kind: body.kind, title: body.title, ...detail }, idempotency)) as Outcome<OperationAccepted>;
  // A repeated request answers the operation it started, without a second child.
  const seen = idempotencyKey ? ((await parent.operationReplay(idempotencyKey, JSON.stringify(body))) as Outcome<OperationAccepted> | null) : null;
  if (seen) return seen;
  if (body.spec?.type === "external" || body.spec?.type === "completions")
    return refuse(400, `a delegation's child answers its prompt with a turn: a ${body.spec.type} thread runs none`, CODES.recordOnlyThread);
  const row = valueOf((await parent.get()) as Outcome<ThreadRow>);
  if (row.archivedAt) return refuse(409, `thread ${parentId} is retired; restore it first`, CODES.threadArchived);
  const operation = newId("op_");
  const spec: SpawnSpec = {
    ...(row.spec.workspace ? { workspace: row.spec.workspace } : {}),
    ...(row.spec.cwd ? { cwd: row.spec.cwd } : {}),
    role: "worker",
    title: body.title,
    ...body.spec,
  };
  const { threadId: child } = await createThread(env, config, spec, undefined, { parent: parentId, operation }, sharedWorktree(row.spec, body.spec?.cwd));
  const started = (await parent.startOperation({ operation, kind: "delegation", title: body.title, child, prompt: body.prompt!, ...detail }, idempotency)) as Outcome<OperationAccepted>;
  if (!started.ok || started.value.replayed) {
    // The parent refused it, or the same request got there first: this child has no operation.
    await threadOf(env, child).archive(started.ok ? "a repeated delegation request" : "its delegation could not be recorded");
    return started;
  }
  // Keyed by the operation, so a retried send cannot give the child the prompt twice.
  const sent = await (threadOf(env, child).postMessage({ text: body.prompt!, from: parentId }, `delegation:${operation}`) as Promise<Outcome<unknown>>).catch(
    (err: unknown): Outcome<unknown> => refuse(503, (err as Error).message, CODES.delegationFailed),
  );
  if (!sent.ok) {
    // An operation no child will answer would stay open, and block its parent's compaction, for ever.
    await parent.reportOperation(operation, JSON.stringify({ outcome: { status: "failed", error: `the child ${child} did not take the prompt: ${sent.body.error}` } }), "caller");
    return ok({ ...started.value, state: "failed" });
  }
  return started;
}
