import { z } from "zod";
import { offeredTools, RUNTIME_TOOL_NAMES, RUNTIME_TOOLS, type RuntimeToolName, type RuntimeToolResult } from "../../../../src/api/tools.js";
import type { TurnRequest } from "../../../../src/api/engine.js";

/** How the engine host reaches the worker's `POST /internal/tools` (set once the worker is up). */
export type RuntimeLink = (body: unknown, signal?: AbortSignal) => Promise<Response>;

/** The turn a tool call belongs to, and the tools it is offered. */
export interface ToolScope {
  thread: string;
  turn: string;
  tools: RuntimeToolName[];
  handoffTo: TurnRequest["handoffTo"];
}

/** A running turn's way to the runtime's tools: in process (pi), or the MCP server's address and the turn's token (engine_a, engine_b). */
export interface TurnToolAccess {
  scope: ToolScope;
  link: RuntimeLink;
  url: string;
  token: string;
}

export function isRuntimeTool(name: string): name is RuntimeToolName {
  return (RUNTIME_TOOL_NAMES as string[]).includes(name);
}

/** `codeRoots`: the host registered a repository, so the code reads are worth offering. */
export function scopeOf(req: TurnRequest, codeRoots: boolean): ToolScope {
  return { thread: req.threadId, turn: req.turnId, tools: offeredTools(req, codeRoots), handoffTo: req.handoffTo };
}

/** What the model reads of a tool: `offer_handoff` names the seats it may offer to. */
export function describeTool(name: RuntimeToolName, scope: ToolScope): string {
  const base = RUNTIME_TOOLS[name].description;
  if (name !== "offer_handoff") return base;
  return `${base} Seats: ${scope.handoffTo.map((s) => (s.role ? `${s.name} (${s.role})` : s.name)).join(", ")}.`;
}

/** Each tool's JSON Schema, made from its constant zod schema the first time a turn offers it, not at every turn. */
const schemas = new Map<RuntimeToolName, Record<string, unknown>>();

/** A tool's input as JSON Schema, for an engine that takes its tools that way (pi): a copy of its own, which the engine may change. */
export function toolSchema(name: RuntimeToolName): Record<string, unknown> {
  let schema = schemas.get(name);
  if (!schema) {
    const { $schema: _, ...rest } = z.toJSONSchema(RUNTIME_TOOLS[name].input) as Record<string, unknown>;
    schema = rest;
    schemas.set(name, schema);
  }
  return structuredClone(schema);
}

/**
 * Runs one call in the worker, which checks the turn and does what the matching route
 * does. A refusal is the tool's error result, in the runtime's words, for the model to
 * read; it never fails the turn.
 */
export async function runRuntimeTool(link: RuntimeLink, scope: ToolScope, name: RuntimeToolName, input: unknown, signal?: AbortSignal): Promise<{ text: string; isError: boolean }> {
  if (!scope.tools.includes(name)) return { text: `${name} is not offered to this turn`, isError: true };
  try {
    const res = await link({ thread: scope.thread, turn: scope.turn, tool: name, input: input ?? {} }, signal);
    const body = (await res.json().catch(() => ({}))) as Partial<RuntimeToolResult> & { error?: string; code?: string };
    if (res.ok && typeof body.text === "string") return { text: body.text, isError: false };
    return { text: `refused (${res.status}${body.code ? ` ${body.code}` : ""}): ${body.error ?? "no reason given"}`, isError: true };
  } catch (err) {
    return { text: `the runtime could not be reached: ${(err as Error).message}`, isError: true };
  }
}

/** A fenced session's loopback reach, with the tool server added: null (the host's network) reaches it already. */
export function withTools(reach: string[] | null, tools: TurnToolAccess): string[] | null {
  return reach === null ? null : [...reach, tools.url];
}
