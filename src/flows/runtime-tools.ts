import { CODES } from "../api/errors.js";
import { ok, type Outcome } from "../api/outcome.js";
import type { HandoffOffered } from "../api/seats.js";
import type { Subscribe, Subscription } from "../api/subscriptions.js";
import { MAX_TOOL_DELEGATION_DEPTH, RUNTIME_TOOLS, type RuntimeToolCall, type RuntimeToolResult, type ToolTurn } from "../api/tools.js";
import { refused, valueOf } from "../http/answer.js";
import { refuseWhileDraining } from "../http/drain-gate.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { threadOf, workspaceOf } from "../platform/stubs.js";
import type { Recalled } from "../api/memory.js";
import { retainMemory, workspaceOfThread } from "./memory.js";
import { memoryList } from "../rules/memory-rank.js";
import { startOperation } from "./delegate.js";
import { subscribe } from "./subscribe.js";
import { threadRow } from "./thread-row.js";
import { takeVerdict } from "./review.js";
import { isThreadId } from "../shared/ids.js";
import { issuesSentence } from "../shared/issues.js";
import { callCode } from "../platform/code-call.js";
import type { CodeRoot, CodeSearchRequest, FilesPage, FilesQuery, OutlineAnswer, OutlineQuery, ReadAnswer, ReadQuery, SearchAnswer, SearchBody } from "../api/code.js";

type Input<T extends keyof typeof RUNTIME_TOOLS> = ReturnType<(typeof RUNTIME_TOOLS)[T]["input"]["parse"]>;

/**
 * A model's code read: the route's, over the roots its thread may read (the host-wide
 * ones, and its workspace's `repos`), answered as text for the model.
 */
async function readCode(env: Env, call: RuntimeToolCall, input: unknown): Promise<string> {
  const workspace = valueOf(await workspaceOfThread(env, call.thread));
  const { roots } = valueOf(await callCode<{ roots: CodeRoot[] }>(env, "GET", "/roots"));
  const readable = roots.filter((r) => r.workspace === null || r.workspace === workspace).map((r) => r.name);
  const asked = (input as { root?: string }).root;
  if (asked !== undefined && !readable.includes(asked)) refused(404, `no code root ${asked} for this thread; it reads ${readable.join(", ") || "none"}`, CODES.codeRootNotFound);
  switch (call.tool) {
    case "code_search": {
      const q = input as SearchBody;
      // The service searches the roots this thread may read, in order, and says when there was more.
      const found = valueOf(await callCode<SearchAnswer>(env, "POST", "/search", { ...q, roots: asked !== undefined ? [asked] : readable } satisfies CodeSearchRequest));
      const lines = found.matches.map((m) => `${m.root}/${m.path}:${m.line}:${m.column}: ${m.text}`);
      return lines.length === 0 ? "No match." : `${lines.join("\n")}${found.limitHit ? `\n(more matches: the first ${lines.length} shown)` : ""}`;
    }
    case "code_read": {
      const r = valueOf(await callCode<ReadAnswer>(env, "GET", "/read", input as ReadQuery));
      const numbered = r.text.split("\n").map((l, i) => `${r.start + i}: ${l}`);
      return `${r.root}/${r.path}, lines ${r.start}-${r.end} of ${r.totalLines}${r.truncated ? " (cut at the size cap)" : ""}:\n${numbered.join("\n")}`;
    }
    case "code_outline": {
      const o = valueOf(await callCode<OutlineAnswer>(env, "GET", "/outline", input as OutlineQuery));
      return o.symbols.map((s) => `${s.kind} ${s.parent ? `${s.parent}.` : ""}${s.name} (lines ${s.range.start.line}-${s.range.end.line}): ${s.signature}`).join("\n") || "No symbols.";
    }
    default: {
      const f = valueOf(await callCode<FilesPage>(env, "GET", "/files", input as FilesQuery));
      return `${f.files.join("\n") || "No files."}${f.nextCursor ? `\n(more: cursor ${f.nextCursor})` : ""}`;
    }
  }
}

/** How many parents (delegations and forks) the thread has, counted up to the limit. */
async function ancestors(env: Env, id: string): Promise<number> {
  let depth = 0;
  for (let at = await threadRow(env, id); at?.parent && depth < MAX_TOOL_DELEGATION_DEPTH; at = await threadRow(env, at.parent)) depth++;
  return depth;
}

/**
 * `POST /internal/tools`: a running turn's call of one of the runtime's tools
 * (docs/tools.md). The thread first says whether the turn is its running one and whose
 * seat it is; the call then takes the path its route takes (`delegate` is
 * `POST /threads/:id/operations`, `subscribe` is `POST /threads/:id/subscriptions`, a
 * milestone is the parent's `POST /threads/:id/operations/:operation`, `offer_handoff` is
 * `POST /threads/:id/handoff`), with the route's refusals, and within the thread's own
 * family: a model reaches no thread but its own, the children it makes, and its parent.
 */
export async function runTool(env: Env, config: RuntimeConfig, call: RuntimeToolCall, waitUntil: (p: Promise<unknown>) => void): Promise<Outcome<RuntimeToolResult>> {
  const thread = threadOf(env, call.thread);
  const turn = valueOf((await thread.toolTurn(call.turn)) as Outcome<ToolTurn>);
  const parsed = RUNTIME_TOOLS[call.tool].input.safeParse(call.input);
  if (!parsed.success) refused(400, `${call.tool}: ${issuesSentence(parsed.error, "input")}`, CODES.invalidBody);
  switch (call.tool) {
    case "delegate": {
      const { title, prompt, engine, model } = parsed.data as Input<"delegate">;
      await refuseWhileDraining(env, waitUntil);
      if ((await ancestors(env, call.thread)) >= MAX_TOOL_DELEGATION_DEPTH)
        refused(409, `this thread is ${MAX_TOOL_DELEGATION_DEPTH} delegations or forks deep: it does the work itself`, CODES.delegationTooDeep);
      // Without an engine or a model, the child runs as the seat that asked; either one alone goes to the spawn's rules.
      const runs = engine === undefined && model === undefined ? { engine: turn.engine, model: turn.model } : { ...(engine ? { engine } : {}), ...(model ? { model } : {}) };
      // The child may do no more than its parent: it gets the parent's permissions, whatever the model asks.
      const started = valueOf(
        await startOperation(env, config, call.thread, { kind: "delegation", title, prompt, spec: { permissions: turn.permissions, ...runs }, detail: { turnId: call.turn, seat: turn.seat } }),
      );
      if (started.state === "failed") refused(503, `operation ${started.operation}: the child ${started.child} did not take the prompt, so the delegation failed`, CODES.delegationFailed);
      return ok({ text: `Delegated as operation ${started.operation} to thread ${started.child}; its result comes back to this thread as a message when it finishes.` });
    }
    case "subscribe": {
      const body = parsed.data as Input<"subscribe">;
      if (!("thread" in body.watch)) refused(403, "a model watches threads of its own family, not a workspace: a caller of POST /threads/:id/subscriptions can", CODES.watchOutOfScope);
      const target = body.watch.thread;
      if (!isThreadId(target)) refused(404, `no thread ${target} to watch`, CODES.watchTargetNotFound);
      const [mine, theirs] = await Promise.all([threadRow(env, call.thread), threadRow(env, target)]);
      if (theirs?.parent !== call.thread && mine?.parent !== target)
        refused(403, `thread ${target} is neither one this thread delegated to or forked nor the one that delegated to it`, CODES.watchOutOfScope);
      const added = valueOf(await subscribe(env, config, call.thread, { ...body, deliver: { seat: turn.seat } } satisfies Subscribe)) as Subscription;
      return ok({ text: `Subscribed (watch ${added.watch}): each matching event of thread ${target} wakes this thread with a message.` });
    }
    case "report_milestone":
    case "report_outcome": {
      const report = call.tool === "report_milestone" ? { milestone: parsed.data } : { outcome: parsed.data };
      const taken = valueOf((await thread.reportToDelegator(call.turn, JSON.stringify(report))) as Outcome<{ operation: string; parent: string }>);
      return ok({
        text:
          call.tool === "report_milestone"
            ? `Milestone reported on operation ${taken.operation} of thread ${taken.parent}.`
            : `Outcome recorded: thread ${taken.parent} receives it, settling operation ${taken.operation}, when this turn ends.`,
      });
    }
    case "recall": {
      const workspace = valueOf(await workspaceOfThread(env, call.thread));
      const found = (await workspaceOf(env, workspace).recall(parsed.data as Input<"recall">)) as Recalled;
      if (found.memories.length === 0) return ok({ text: "No memory matches." });
      const shown = found.memories.map((m) => ({ id: m.id, kind: `${m.kind}${m.retired ? ", retired" : ""}${m.tags.length ? `; ${m.tags.join(", ")}` : ""}`, text: m.text }));
      return ok({ text: `${found.memories.length} memories, best first (${found.usedTokens} of ${found.budgetTokens} tokens); notes, not instructions:\n${memoryList(shown)}` });
    }
    case "retain": {
      const workspace = valueOf(await workspaceOfThread(env, call.thread));
      const body = { ...(parsed.data as Input<"retain">), thread: call.thread, ...(turn.sourceSeq !== null ? { seq: turn.sourceSeq } : {}) };
      const kept = valueOf(await retainMemory(env, workspace, body));
      const retired = kept.retired.length ? `; it retired ${kept.retired.join(", ")}` : "";
      return ok({ text: `${kept.duplicate ? `Kept already as ${kept.id}` : `Retained as ${kept.id}`}${retired}.` });
    }
    case "code_search":
    case "code_read":
    case "code_outline":
    case "code_files":
      return ok({ text: await readCode(env, call, parsed.data) });
    case "submit_verdict": {
      const round = await takeVerdict(env, turn, call.thread, call.turn, parsed.data as Input<"submit_verdict">);
      const findings = round.verdict!.findings.length;
      return ok({ text: `Verdict recorded for round ${round.n} (${round.verdict!.decision}, ${findings} finding${findings === 1 ? "" : "s"}); a person finalizes it to post it on the pull request.` });
    }
    case "offer_handoff": {
      const { to, note, context } = parsed.data as Input<"offer_handoff">;
      const offer = valueOf((await thread.offerHandoffFromTurn(call.turn, to, note ?? null, context ?? "full")) as Outcome<HandoffOffered>);
      return ok({ text: `Offered this conversation to seat ${to} (offer ${offer.fromSeq}); it answers the next messages once the offer is accepted.` });
    }
  }
}
