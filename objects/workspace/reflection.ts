import type { ReflectionAnswer, ReflectionRequest } from "../../src/api/engine.js";
import { CODES } from "../../src/api/errors.js";
import type { Memory, Reflected } from "../../src/api/memory.js";
import { ok, refuse, type Outcome } from "../../src/api/outcome.js";
import { DEFAULT_WORKSPACE } from "../../src/api/turns.js";
import type { Policy } from "../../src/api/workspaces.js";
import { curatorModels, type RuntimeConfig } from "../../src/platform/config.js";
import { callEngine } from "../../src/platform/engine-call.js";
import type { Env } from "../../src/platform/env.js";
import { accountScope } from "../../src/rules/accounts.js";
import type { CommitQueue } from "../lib/commit-queue.js";
import type { Memories } from "./memory.js";
import type { WorkspaceSettings } from "./settings.js";

/** Where the automatic reflection last read up to, in the order memories were stored. */
const REFLECTED_UPTO = "memory-reflected-upto";

/** What reflecting uses of its Workspace. */
export interface ReflectionWorkspace {
  readonly env: Env;
  readonly config: RuntimeConfig;
  readonly commits: Pick<CommitQueue, "write">;
  readonly memories: Pick<Memories, "recent" | "position" | "since" | "get" | "retain">;
  readonly settings: Pick<WorkspaceSettings, "get" | "put">;
}

/** The curator's reflections over a workspace's memories: asked for, or automatic once enough was stored. */
export class Reflection {
  /** One reflection at a time, asked for or automatic: two would read the same memories and write the same conclusions. */
  private reflection: Promise<unknown> = Promise.resolve();
  private reflecting = false;

  constructor(private readonly ws: ReflectionWorkspace) {}

  /**
   * The curator model reads the newest memories (reflections aside) and writes
   * reflections, each citing the memories it rests on: a citation that names no memory
   * of this workspace is dropped, and a reflection left citing none is not kept.
   */
  reflect(workspace: string, limit = 50): Promise<Outcome<Reflected>> {
    const run = this.reflection.then(() => this.reflectNow(workspace, limit));
    this.reflection = run.catch(() => {});
    return run;
  }

  /** The automatic reflection: once enough memory was stored since the last (`SERVICE_MEMORY_REFLECT_EVERY`). */
  reflectWhenDue(workspace: string): void {
    const every = this.ws.config.memoryReflectEvery;
    if (every === 0 || this.reflecting) return;
    if (this.ws.memories.since(Number(this.ws.settings.get(REFLECTED_UPTO) ?? 0)) < every) return;
    this.reflecting = true;
    void this.reflect(workspace)
      .then((r) => !r.ok && console.error(`workspace ${workspace}: the automatic reflection failed: ${r.body.error}`))
      .catch((err: unknown) => console.error(`workspace ${workspace}: the automatic reflection failed: ${(err as Error).message}`))
      .finally(() => (this.reflecting = false));
  }

  /**
   * A workspace has no thread whose model could reflect: with no curator configured, the
   * model its threads get when they name none (its policy's default, else the runtime's).
   */
  private defaultModel(workspace: string): string {
    const owned = this.ws.settings.get("policy");
    const policy: Policy | undefined = owned ? (JSON.parse(owned) as Policy) : this.ws.config.workspaces?.get(workspace)?.policy;
    return policy?.defaults.model ?? this.ws.config.defaultModel;
  }

  private async reflectNow(workspace: string, limit: number): Promise<Outcome<Reflected>> {
    const { config: c, memories, commits } = this.ws;
    const models = curatorModels(c, this.defaultModel(workspace));
    const read = memories.recent(limit);
    if (read.length < 2) return ok({ reflections: [], droppedCitations: [], model: null });
    // Marked before the model answers: one that fails is tried again only after as many new memories, not on every retain.
    const upTo = memories.position(read.at(-1)!.id);
    await commits.write(() => this.ws.settings.put(REFLECTED_UPTO, String(upTo)));
    const request: ReflectionRequest = {
      threadId: `workspace:${workspace}`,
      models,
      account: null,
      accountChoice: accountScope(c, workspace === DEFAULT_WORKSPACE ? null : workspace),
      proxyEnv: null,
      timeoutMs: c.curatorTimeoutMs,
      memories: read.map((m) => ({ id: m.id, kind: m.kind, text: m.text })),
    };
    let answer: ReflectionAnswer;
    try {
      answer = (await (await callEngine(this.ws.env, "/reflections", request)).json()) as ReflectionAnswer;
    } catch (err) {
      return refuse(503, `the engine host could not be reached: ${(err as Error).message}`, CODES.reflectUnavailable);
    }
    if ("error" in answer) return refuse(503, `no curator model reflected: ${answer.error}`, CODES.reflectUnavailable);
    return commits.write((): Outcome<Reflected> => {
      const now = new Date().toISOString();
      const dropped: string[] = [];
      const reflections: Memory[] = [];
      for (const r of answer.reflections) {
        const cites = [...new Set(r.cites)].filter((id) => (memories.get(id) ? true : (dropped.push(id), false)));
        if (cites.length === 0) continue;
        const kept = memories.retain({ text: r.text }, now, "reflection", cites);
        if (kept.ok && !kept.value.duplicate) reflections.push(kept.value.memory);
      }
      return ok({ reflections, droppedCitations: dropped, model: answer.model });
    });
  }
}
