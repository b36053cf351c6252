import type { EditMemory, MemoryQuery, Recall, Reflect, Retain } from "../src/api/memory.js";
import type { FeedForwardPage, FeedReversePage } from "../src/api/workspace-feed.js";
import { WorkCalls } from "./work.js";

/** Workspaces: their open approvals and questions, their feed's pages, their memory. */
export class WorkspaceCalls extends WorkCalls {
  approvals(workspace = "default") {
    return this.route("GET /workspaces/:name/approvals", { params: { name: workspace } });
  }

  questions(workspace = "default") {
    return this.route("GET /workspaces/:name/questions", { params: { name: workspace } });
  }

  /** A page of a workspace's feed: forward from `after`, backward from `before`, or the newest entries. */
  workspaceTail(workspace: string, query: { after: number | string; limit?: number }): Promise<FeedForwardPage>;
  workspaceTail(workspace: string, query?: { before?: number | string | "latest"; limit?: number }): Promise<FeedReversePage>;
  workspaceTail(workspace: string, query: Record<string, string | number | undefined> = {}) {
    return this.route("GET /workspaces/:name/tail", { params: { name: workspace }, query });
  }

  /** Stores a memory, or finds the same text kept already (`duplicate`). */
  retain(workspace: string, body: Retain) {
    return this.route("POST /workspaces/:name/memory/retain", { params: { name: workspace }, body });
  }

  recall(workspace: string, body: Recall) {
    return this.route("POST /workspaces/:name/memory/recall", { params: { name: workspace }, body });
  }

  reflect(workspace: string, body: Reflect = {}) {
    return this.route("POST /workspaces/:name/memory/reflect", { params: { name: workspace }, body });
  }

  /** A page of the workspace's memories, newest first; pass `nextBefore` as `before` for the next. */
  memories(workspace: string, query: MemoryQuery = {}) {
    return this.route("GET /workspaces/:name/memory", { params: { name: workspace }, query });
  }

  memory(workspace: string, id: string) {
    return this.route("GET /workspaces/:name/memory/:id", { params: { name: workspace, id } });
  }

  /** A person's correction: text, key, tags, importance, or `retired`. */
  editMemory(workspace: string, id: string, edit: EditMemory) {
    return this.route("PATCH /workspaces/:name/memory/:id", { params: { name: workspace, id }, body: edit });
  }

  forgetMemory(workspace: string, id: string) {
    return this.route("DELETE /workspaces/:name/memory/:id", { params: { name: workspace, id } });
  }

  /** The memories retained from a thread. */
  threadMemory(id: string, query: Omit<MemoryQuery, "thread"> = {}) {
    return this.route("GET /threads/:id/memory", { params: { id }, query });
  }
}
