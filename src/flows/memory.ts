import { CODES } from "../api/errors.js";
import type { Memory, Retain, Retained } from "../api/memory.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import type { ThreadRow } from "../api/threads.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import type { Env } from "../platform/env.js";
import { threadOf, workspaceOf } from "../platform/stubs.js";
import { threadRow } from "./thread-row.js";

/** A thread's row and the workspace it belongs to (threads spawned without one are `default`'s), or the refusal for a thread there is none of. */
async function threadHome(env: Env, thread: string): Promise<Outcome<{ row: ThreadRow; workspace: string }>> {
  const row = await threadRow(env, thread);
  if (!row) return refuse(404, `no thread ${thread}`, CODES.threadNotFound);
  return ok({ row, workspace: row.spec.workspace ?? DEFAULT_WORKSPACE });
}

export async function workspaceOfThread(env: Env, thread: string): Promise<Outcome<string>> {
  const home = await threadHome(env, thread);
  return home.ok ? ok(home.value.workspace) : home;
}

/**
 * `POST /workspaces/:name/memory/retain`. A memory that names the thread it came from
 * must come from a thread of this workspace, at an event it has; the thread then records
 * the retain in its log (`memory-retained`), so `GET /threads/:id/memory` and the log
 * agree on what it recorded.
 */
export async function retainMemory(env: Env, workspace: string, body: Retain): Promise<Outcome<Retained>> {
  if (body.seq !== undefined && body.thread === undefined) return refuse(400, "seq names an event of the thread the memory came from: give thread too", CODES.invalidBody);
  if (body.thread !== undefined) {
    const home = await threadHome(env, body.thread);
    if (!home.ok) return home;
    const { row, workspace: its } = home.value;
    if (its !== workspace) return refuse(400, `thread ${body.thread} is in workspace ${its}, not ${workspace}`, CODES.workspaceMismatch);
    if (body.seq !== undefined && body.seq > row.lastSeq) return refuse(400, `thread ${body.thread} has no event ${body.seq} (its last is ${row.lastSeq})`, CODES.eventNotFound);
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
