import type { Merged, MergeResult, MergeWork } from "../api/cycles.js";
import { CODES } from "../api/errors.js";
import type { ErrorBody } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import type { MessageAccepted, ThreadRow } from "../api/threads.js";
import { valueOf } from "../http/answer.js";
import type { Env } from "../platform/env.js";
import { threadOf } from "../platform/stubs.js";
import { isThreadId } from "../shared/ids.js";
import { callEngine } from "../platform/engine-call.js";

/**
 * `POST /threads/:id/merge`: the child's work (the head of its working directory) merged
 * into the parent's checkout by the engine host, which runs git on this machine, fenced as
 * the parent's session is (the checkout is the session's to change, hooks and all); the
 * result is a `merge` event on the parent. Merging a child again changes nothing and
 * answers `alreadyMerged`.
 */
export async function mergeChild(env: Env, parentId: string, childId: string): Promise<Outcome<MergeResult>> {
  const parent = valueOf((await threadOf(env, parentId).get()) as Outcome<ThreadRow>);
  const child = isThreadId(childId) ? ((await threadOf(env, childId).get()) as Outcome<ThreadRow>) : null;
  if (!child?.ok || child.value.parent !== parentId) return refuse(404, `thread ${childId} is not a child of ${parentId}`, CODES.notAChild);
  const into = parent.spec.cwd;
  const from = child.value.spec.cwd;
  if (!into || !from) return refuse(409, `${!into ? "this thread" : `child ${childId}`} has no working directory (cwd) to merge ${!into ? "into" : "from"}`, CODES.noCheckout);
  if (into === from) return refuse(409, `child ${childId} works in this thread's own checkout: there is nothing to merge`, CODES.noCheckout);
  const work: MergeWork = {
    into,
    from,
    message: `Merge the work of thread ${childId}${child.value.title ? ` (${child.value.title})` : ""}`,
    ...(parent.spec.worktree ? { worktree: parent.spec.worktree } : {}),
  };
  let res: Response;
  try {
    res = await callEngine(env, "/merges", work);
  } catch (err) {
    return refuse(503, `the engine host, which runs git, could not be reached: ${(err as Error).message}`, CODES.engineHostUnavailable);
  }
  const answer = (await res.json()) as Merged | ErrorBody;
  if (!res.ok) {
    const e = answer as ErrorBody;
    return refuse(res.status, e.error, e.code ?? CODES.mergeFailed, "files" in e ? { files: e.files } : {});
  }
  const merged = answer as Merged;
  const recorded = valueOf((await threadOf(env, parentId).record("merge", { child: childId, ...merged })) as Outcome<MessageAccepted>);
  return ok({ child: childId, ...merged, seq: recorded.seq });
}
