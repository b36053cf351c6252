import type { Outcome } from "../api/outcome.js";
import type { ThreadRow } from "../api/threads.js";
import type { Env } from "../platform/env.js";
import { threadOf } from "../platform/stubs.js";
import { isThreadId } from "../shared/ids.js";

/** A thread's row, or null when there is none (a string that is no thread id wakes no object). */
export async function threadRow(env: Env, id: string): Promise<ThreadRow | null> {
  if (!isThreadId(id)) return null;
  const r = (await threadOf(env, id).get()) as Outcome<ThreadRow>;
  return r.ok ? r.value : null;
}
