import { accountViews } from "../platform/account-pool.js";
import type { AttentionItem } from "../api/operator.js";
import type { PendingApproval, PendingQuestion } from "../api/turns.js";
import { DEFAULT_WORKSPACE } from "../api/turns.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { catalogOf, hostOf, workspaceOf } from "../platform/stubs.js";
import { exhaustion } from "../rules/exhaustion.js";
import { noteStorageState } from "../http/storage-watch.js";

/** Degraded threads listed at most (the oldest first): beyond that the operator has a bigger problem. */
const DEGRADED_SHOWN = 200;

/**
 * Everything that needs a person now, gathered from the objects that own it: each
 * workspace's pending approvals and open questions, degraded threads (the catalog), the
 * spawn pause (the keeper) and exhausted accounts (the account pool).
 */
export async function attentionItems(env: Env, config: RuntimeConfig): Promise<{ items: AttentionItem[]; unknown: AttentionItem["kind"][] }> {
  const catalog = catalogOf(env);
  const [inUse, degraded, pause, views, storage] = await Promise.all([
    catalog.workspaceNames(),
    catalog.atStage("degraded", DEGRADED_SHOWN),
    hostOf(env).spawnPause(),
    accountViews(env),
    hostOf(env).storageState(),
  ]);
  noteStorageState(storage);
  // Workspaces with live threads (labels, on a host without a workspaces file), the configured ones, and `default`.
  const names = new Set([...(config.workspaces?.keys() ?? []), ...inUse, DEFAULT_WORKSPACE]);
  const waits = await Promise.all(
    [...names].map(async (name) => {
      const ws = workspaceOf(env, name);
      const [approvals, questions] = await Promise.all([ws.approvals(), ws.questions()]);
      const workspace = name === DEFAULT_WORKSPACE ? null : name;
      return [
        ...(JSON.parse(approvals) as PendingApproval[]).map(
          (a): AttentionItem => ({
            id: `approval:${a.approvalId}`,
            kind: "approval",
            title: `a ${a.name} call waits for approval`,
            threadId: a.threadId,
            workspace,
            since: a.openedAt,
            action: `POST /threads/${a.threadId}/approvals/${a.approvalId} {"decision": "allow" | "deny"}`,
            detail: { approvalId: a.approvalId, turnId: a.turnId, name: a.name, input: a.input },
          }),
        ),
        ...(JSON.parse(questions) as PendingQuestion[]).map(
          (q): AttentionItem => ({
            id: `question:${q.requestId}`,
            kind: "question",
            title: `a question waits for an answer: ${q.question.slice(0, 120)}`,
            threadId: q.threadId,
            workspace,
            since: q.openedAt,
            action: `POST /threads/${q.threadId}/questions/${q.requestId}/answer {"answer": "..."}, or .../dismiss, or .../continue`,
            detail: { requestId: q.requestId, turnId: q.turnId, question: q.question },
          }),
        ),
      ];
    }),
  );
  const items = waits.flat();
  for (const t of degraded)
    items.push({
      id: `degraded:${t.id}`,
      kind: "degraded",
      title: `thread ${t.title ?? t.id} refuses turns: a body of an earlier turn could not be saved`,
      threadId: t.id,
      workspace: t.workspace,
      since: t.updatedAt,
      action: `POST /threads/${t.id}/recover {"acknowledgeHistoryGap": true, "reason": "..."}`,
      detail: {},
    });
  if (pause.paused)
    items.push({
      id: "spawn-pause",
      kind: "spawn-pause",
      title: "spawns are paused: the data volume is low on space",
      threadId: null,
      workspace: null,
      since: pause.since,
      action: `free space on the data volume, or POST /keeper/spawn-pause/clear {"reason": "..."}`,
      detail: { reason: pause.reason },
    });
  if (storage.state === "full")
    items.push({
      id: "storage-full",
      kind: "storage-full",
      title: "the data volume is full: writes are refused (507 storage-full) until space is freed",
      threadId: null,
      workspace: null,
      since: storage.since,
      action: "free space on the data volume; writing resumes by itself with the next write that succeeds (docs/operating.md, \"A full disk\")",
      detail: { reason: storage.reason, refusals: storage.refusals, lastAt: storage.lastAt, threadIds: storage.threadIds },
    });
  for (const e of views ? exhaustion(config, views) : [])
    items.push({
      id: `accounts-exhausted:${e.workspace ?? "(unclaimed)"}:${e.provider}`,
      kind: "accounts-exhausted",
      title: `every ${e.provider} account of ${e.workspace ? `workspace ${e.workspace}` : "the unclaimed pool"} is cooling down`,
      threadId: null,
      workspace: e.workspace,
      since: e.since,
      action: "GET /accounts; add an account to the roster, or wait for the cool-down",
      detail: { accounts: e.accounts.map((a) => a.id), until: e.until },
    });
  items.sort((a, b) => (a.since ?? "").localeCompare(b.since ?? "") || a.id.localeCompare(b.id));
  // An account pool that did not answer says nothing about exhaustion, open or closed.
  return { items, unknown: views ? [] : ["accounts-exhausted"] };
}
