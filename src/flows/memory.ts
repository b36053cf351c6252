import { CODES } from "../api/errors.js";
import type { Memory, Retain, Retained } from "../api/memory.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import type { ThreadRow } from "../api/threads.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import type { Env } from "../platform/env.js";
import { threadOf, workspaceOf } from "../platform/stubs.js";
import { isThreadId } from "../shared/ids.js";

/** The workspace a thread belongs to (threads spawned without one are `default`'s), or the refusal for a thread there is none of. */
export async function workspaceOfThread(env: Env, thread: string): Promise<Outcome<string>> {
  const row = (await threadOf(env, thread).get()) as Outcome<ThreadRow>;
  if (!row.ok) return refuse(404, `no thread ${thread}`, CODES.threadNotFound);
  return ok(row.value.spec.workspace ?? DEFAULT_WORKSPACE);
}

/**
 * `POST /workspaces/:name/memory/retain`. A memory that names the thread it came from
 * must come from a thread of this workspace, at an event it has; the thread then records
 * the retain in its log (`memory-retained`), so `GET /threads/:id/memory` and the log
 * agree on what it recorded.
 */
export async function retainMemory(env: Env, workspace: string, body: Retain): Promise<Outcome<Retained>> {
  if (body.seq !== undefined && body.thread === undefined) return refuse(400, "seq names an event of the thread the memory came from: give thread too");
  if (body.thread !== undefined) {
    if (!isThreadId(body.thread)) return refuse(404, `no thread ${body.thread}`, CODES.threadNotFound);
    const row = (await threadOf(env, body.thread).get()) as Outcome<ThreadRow>;
    if (!row.ok) return refuse(404, `no thread ${body.thread}`, CODES.threadNotFound);
    const home = row.value.spec.workspace ?? DEFAULT_WORKSPACE;
    if (home !== workspace) return refuse(400, `thread ${body.thread} is in workspace ${home}, not ${workspace}`, CODES.workspaceMismatch);
    if (body.seq !== undefined && body.seq > row.value.lastSeq) return refuse(400, `thread ${body.thread} has no event ${body.seq} (its last is ${row.value.lastSeq})`, CODES.eventNotFound);
  }
  const stored = (await workspaceOf(env, workspace).retain(workspace, body)) as Outcome<Retained>;
  if (stored.ok && body.thread !== undefined) {
    const m: Memory = stored.value.memory;
    // The memory is stored: a thread that cannot record it now (retired meanwhile, or unreachable) does not undo that.
    await (threadOf(env, body.thread).noteMemory({
      workspace,
      id: m.id,
      kind: m.kind,
      key: m.key,
      tags: m.tags,
      sourceSeq: body.seq ?? null,
      duplicate: stored.value.duplicate,
      retired: stored.value.retired,
    }) as Promise<unknown>).catch((err: unknown) => console.error(`thread ${body.thread}: memory ${m.id} was stored but not recorded in its log: ${(err as Error).message}`));
  }
  return stored;
}
