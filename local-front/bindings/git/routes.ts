import type { Outcome } from "../../../src/api/outcome.js";
import { invalid } from "../http.js";
import { LinesRequest, WorktreeRemove, WorktreeRequest } from "../../../src/api/rooms.js";
import type { Worktrees } from "./worktrees.js";

/**
 * The code service's `/git/...` routes, which the worker asks for a room's and a build
 * thread's code (src/api/rooms.ts). Null: not one of them.
 */
export async function gitRoute(worktrees: Worktrees, method: string, url: URL, body: () => Promise<unknown>): Promise<Outcome<unknown> | null> {
  if (method !== "POST") return null;
  const schema = url.pathname === "/git/worktrees" ? WorktreeRequest : url.pathname === "/git/worktrees/remove" ? WorktreeRemove : url.pathname === "/git/lines" ? LinesRequest : null;
  if (!schema) return null;
  const parsed = schema.safeParse(await body());
  if (!parsed.success) return invalid(parsed.error);
  if (url.pathname === "/git/worktrees") return worktrees.ensure(parsed.data as WorktreeRequest);
  if (url.pathname === "/git/lines") return worktrees.lines(parsed.data as LinesRequest);
  return worktrees.remove((parsed.data as { id: string }).id);
}
