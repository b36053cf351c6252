import { CODES } from "../api/errors.js";
import { LIST_MAX_LIMIT, type ThreadListPage, type ThreadHead } from "../api/threads.js";
import { refuse, type Outcome } from "../api/outcome.js";
import type { Subscribe, Subscription, WatchTarget } from "../api/subscriptions.js";
import { valueOf } from "../http/answer.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { catalogOf, threadOf, workspaceOf } from "../platform/stubs.js";
import { spawnWorkspace } from "../rules/workspaces.js";
import { isThreadId } from "../shared/ids.js";

/** Every live thread of a workspace but `except`, page by page from the catalog. */
async function workspaceThreads(env: Env, workspace: string, except: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: ThreadListPage = valueOf((await catalogOf(env).list({ limit: LIST_MAX_LIMIT, after, sort: "created", archived: "live", workspace, seats: "all" })) as Outcome<ThreadListPage>);
    ids.push(...page.threads.map((t) => t.id).filter((id) => id !== except));
    if (!page.hasMore || !page.nextAfter) return ids;
    after = page.nextAfter;
  }
}

/** Tells the watched side: the thread, or the workspace and each of its threads now (a thread spawned later asks the workspace). */
async function eachWatched(env: Env, subscriber: string, target: WatchTarget, tell: (thread: string) => Promise<unknown>): Promise<void> {
  const threads = "thread" in target ? [target.thread] : await workspaceThreads(env, target.workspace, subscriber);
  await Promise.all(threads.map((t) => tell(t).catch((err: unknown) => console.error(`subscription: thread ${t} was not told: ${(err as Error).message}`))));
}

/**
 * `POST /threads/:id/subscriptions`: recorded on the subscriber first (where its wakes are
 * taken), then on what it watches (where matches are made): a thread, or a workspace and
 * each of its live threads but the subscriber. docs/subscriptions.md.
 */
export async function subscribe(env: Env, config: RuntimeConfig, subscriber: string, body: Subscribe): Promise<Outcome<Subscription>> {
  const target = body.watch;
  if ("thread" in target) {
    const head = isThreadId(target.thread) && target.thread !== subscriber ? ((await threadOf(env, target.thread).head()) as Outcome<ThreadHead>) : null;
    if (!head?.ok) return refuse(404, `no thread ${target.thread} to watch${target.thread === subscriber ? " (a thread does not watch itself)" : ""}`, CODES.watchTargetNotFound);
  } else valueOf(spawnWorkspace(config, { workspace: target.workspace }));
  const filter = body.filter ?? {};
  const added = (await threadOf(env, subscriber).subscribe(target, filter, body.note ?? null, body.deliver ?? null)) as Outcome<Subscription>;
  if (!added.ok) return added;
  const { watch } = added.value;
  if ("thread" in target) {
    // One thread to tell: a subscription it never heard of would never wake anyone, so it is undone.
    const told = await (threadOf(env, target.thread).addWatcher(watch, subscriber, JSON.stringify(filter)) as Promise<Outcome<true>>).catch(
      (err: unknown): Outcome<true> => refuse(503, (err as Error).message, CODES.watchFailed),
    );
    if (!told.ok) {
      await threadOf(env, subscriber).unsubscribe(watch);
      return refuse(503, `thread ${target.thread} could not be told of the subscription: ${told.body.error}`, CODES.watchFailed);
    }
    return added;
  }
  await workspaceOf(env, target.workspace).addWatch(watch, subscriber, JSON.stringify(filter));
  await eachWatched(env, subscriber, target, (t) => threadOf(env, t).addWatcher(watch, subscriber, JSON.stringify(filter)));
  return added;
}

/** `DELETE /threads/:id/subscriptions/:watch`: the subscriber drops it first, so a wake in flight is not taken. */
export async function unsubscribe(env: Env, subscriber: string, watch: string): Promise<Outcome<Subscription>> {
  const removed = (await threadOf(env, subscriber).unsubscribe(watch)) as Outcome<Subscription>;
  if (!removed.ok) return removed;
  const target = removed.value.target;
  if ("workspace" in target) await workspaceOf(env, target.workspace).removeWatch(watch);
  await eachWatched(env, subscriber, target, (t) => threadOf(env, t).removeWatcher(watch));
  return removed;
}
