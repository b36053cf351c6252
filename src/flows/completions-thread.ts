import type { CompletionEventBody } from "../api/completions.js";
import type { ThreadSpec } from "../api/threads.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { threadOf, workspaceOf } from "../platform/stubs.js";
import { newThreadId } from "../shared/ids.js";
import type { Outcome } from "../api/outcome.js";

/** The spec of a workspace's completions thread: it records calls; nothing runs on it by itself. */
function completionsSpec(config: RuntimeConfig, workspace: string): ThreadSpec {
  return {
    workspace,
    title: `completions of ${workspace}`,
    role: "chat",
    type: "completions",
    engine: "pi",
    model: config.defaultModel,
    permissions: "deny",
    cwd: null,
    account: null,
    proxyEnv: null,
    fallback: null,
    approvalTimeoutMs: null,
    questionTimeoutMs: null,
    onBusy: "queue",
  };
}

/**
 * Writes one `completion` event to the workspace's completions thread `id` (named by
 * `completionsThreadId`). The thread is created by whichever call first finds it
 * missing, and a second creator's 409 just means the first won.
 */
export async function recordCompletion(env: Env, config: RuntimeConfig, workspace: string, id: string, body: CompletionEventBody): Promise<void> {
  const thread = threadOf(env, id);
  let written = (await thread.record("completion", body)) as Outcome<unknown>;
  if (!written.ok && written.status === 404) {
    const made = (await thread.init(id, completionsSpec(config, workspace))) as Outcome<unknown>;
    if (!made.ok && made.status !== 409) throw new Error(`the completions thread ${id} could not be created: ${JSON.stringify(made.body)}`);
    written = (await thread.record("completion", body)) as Outcome<unknown>;
  }
  if (!written.ok) throw new Error(`the completion event could not be written: ${JSON.stringify(written.body)}`);
}

/** The workspace's completions thread id, creating the name (not the thread) if needed. */
export function completionsThreadId(env: Env, workspace: string): Promise<string> {
  return workspaceOf(env, workspace).completionsThread(newThreadId());
}
