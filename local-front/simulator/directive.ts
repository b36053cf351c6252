import { BadRequest, FAIL_KINDS, type FailKind } from "./errors.js";

export interface Directive {
  reply?: string;
  chunks?: number;
  delayMs?: number;
  tool?: ToolStep;
  /** Parallel calls: one message carrying all of them. */
  tools?: ToolStep[];
  /** Text written in the same message as the tool calls, before them. */
  say?: string;
  /** A reasoning (thinking) item opening every message of the turn. */
  reasoning?: string;
  /** `length`: the final answer stops at the output limit. */
  stop?: "length";
  ask?: string;
  fail?: FailKind;
  /** `fail` applies only to requests for these models (a fallback model then answers). */
  failFor?: string[];
  /** `fail` applies only to calls with these organizations' credentials (`org-<account id>` behind the credential proxy). */
  failOrgs?: string[];
  /** After the tool steps, answer nothing (an agent that stops after a tool result). */
  stall?: boolean;
  retryAfter?: number;
  usage?: { input?: number; output?: number };
}

export interface ToolStep {
  name: string;
  input: Record<string, unknown>;
  /**
   * Called as written even though the request does not offer it: a model trained on
   * another harness may call a tool it was not given (codex's `shell`, with an argv array).
   */
  unoffered?: true;
}

export interface DirectedText {
  /** The last `@sim` line; earlier ones are still validated but otherwise ignored. */
  directive: Directive;
  /** The text with every `@sim` line removed. */
  text: string;
}

const FIELDS = new Set(["reply", "chunks", "delayMs", "tool", "tools", "say", "reasoning", "stop", "ask", "fail", "failFor", "failOrgs", "stall", "retryAfter", "usage"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isCount(v: unknown, min: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= min;
}

function invalid(what: string): never {
  throw new BadRequest(`@sim directive: ${what}`);
}

function toolStep(raw: unknown, where: string): ToolStep {
  if (!isObject(raw)) invalid(`"${where}" must be an object {name, input}`);
  if (typeof raw.name !== "string" || raw.name === "") invalid(`"${where}.name" must be a non-empty string`);
  if (raw.input !== undefined && !isObject(raw.input)) invalid(`"${where}.input" must be a JSON object`);
  for (const key of Object.keys(raw)) if (!["name", "input", "unoffered"].includes(key)) invalid(`unknown field "${where}.${key}"`);
  if (raw.unoffered !== undefined && raw.unoffered !== true) invalid(`"${where}.unoffered" must be true`);
  return { name: raw.name, input: raw.input ?? {}, ...(raw.unoffered ? { unoffered: true as const } : {}) };
}

function validate(raw: Record<string, unknown>): Directive {
  // Unknown fields are refused so a typo ("replay") fails loudly instead of silently echoing.
  for (const key of Object.keys(raw)) if (!FIELDS.has(key)) invalid(`unknown field "${key}" (known: ${[...FIELDS].join(", ")})`);
  const d: Directive = {};
  if (raw.reply !== undefined) {
    if (typeof raw.reply !== "string") invalid(`"reply" must be a string`);
    d.reply = raw.reply;
  }
  if (raw.chunks !== undefined) {
    if (!isCount(raw.chunks, 1)) invalid(`"chunks" must be an integer >= 1`);
    d.chunks = raw.chunks;
  }
  if (raw.delayMs !== undefined) {
    if (typeof raw.delayMs !== "number" || !Number.isFinite(raw.delayMs) || raw.delayMs < 0) invalid(`"delayMs" must be a number >= 0`);
    d.delayMs = raw.delayMs;
  }
  if (raw.tool !== undefined) d.tool = toolStep(raw.tool, "tool");
  if (raw.tools !== undefined) {
    if (!Array.isArray(raw.tools) || raw.tools.length === 0) invalid(`"tools" must be a non-empty array of {name, input}`);
    if (d.tool) invalid(`"tool" and "tools" cannot be combined: use "tools" for calls made together`);
    d.tools = raw.tools.map((t, i) => toolStep(t, `tools[${i}]`));
  }
  for (const field of ["say", "reasoning"] as const) {
    if (raw[field] === undefined) continue;
    if (typeof raw[field] !== "string") invalid(`"${field}" must be a string`);
    d[field] = raw[field];
  }
  if (raw.stop !== undefined) {
    if (raw.stop !== "length") invalid(`"stop" must be "length"`);
    d.stop = raw.stop;
  }
  if (raw.ask !== undefined) {
    if (typeof raw.ask !== "string") invalid(`"ask" must be a string`);
    d.ask = raw.ask;
  }
  if (raw.fail !== undefined) {
    if (!FAIL_KINDS.includes(raw.fail as FailKind)) invalid(`"fail" must be one of ${FAIL_KINDS.join(", ")}`);
    d.fail = raw.fail as FailKind;
  }
  if (raw.stall !== undefined) {
    if (typeof raw.stall !== "boolean") invalid(`"stall" must be true or false`);
    d.stall = raw.stall;
  }
  if (raw.failFor !== undefined) {
    if (!Array.isArray(raw.failFor) || !raw.failFor.every((m) => typeof m === "string")) invalid(`"failFor" must be an array of model ids`);
    d.failFor = raw.failFor as string[];
  }
  if (raw.failOrgs !== undefined) {
    if (!Array.isArray(raw.failOrgs) || !raw.failOrgs.every((m) => typeof m === "string")) invalid(`"failOrgs" must be an array of organization ids`);
    d.failOrgs = raw.failOrgs as string[];
  }
  if (raw.retryAfter !== undefined) {
    if (!isCount(raw.retryAfter, 0)) invalid(`"retryAfter" must be an integer >= 0 (seconds)`);
    d.retryAfter = raw.retryAfter;
  }
  if (raw.usage !== undefined) {
    const usage = raw.usage;
    if (!isObject(usage)) invalid(`"usage" must be an object {input, output}`);
    for (const key of Object.keys(usage)) if (key !== "input" && key !== "output") invalid(`unknown field "usage.${key}"`);
    if (usage.input !== undefined && !isCount(usage.input, 0)) invalid(`"usage.input" must be an integer >= 0`);
    if (usage.output !== undefined && !isCount(usage.output, 0)) invalid(`"usage.output" must be an integer >= 0`);
    d.usage = { input: usage.input, output: usage.output };
  }
  return d;
}

/** The JSON after `@sim`, or undefined when the line is not a directive (`@simple` is just text). */
function directiveBody(line: string): string | undefined {
  const trimmed = line.trimStart();
  if (!trimmed.startsWith("@sim")) return undefined;
  const rest = trimmed.slice(4);
  if (rest !== "" && !/^[\s{]/.test(rest)) return undefined;
  return rest.trim();
}

/** Whether a line is a `@sim` directive: a script for the simulator, not words of the person. */
export function isDirectiveLine(line: string): boolean {
  return directiveBody(line) !== undefined;
}

/** Splits user text into its `@sim` directives and the rest; throws BadRequest naming a bad directive. */
export function parseDirectives(text: string): DirectedText {
  const kept: string[] = [];
  let directive: Directive = {};
  for (const line of text.split(/\r?\n/)) {
    const body = directiveBody(line);
    if (body === undefined) {
      kept.push(line);
      continue;
    }
    if (body === "") invalid(`expected a JSON object after @sim`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      invalid(`not valid JSON (${(err as Error).message}): ${body.slice(0, 200)}`);
    }
    if (!isObject(parsed)) invalid(`expected a JSON object after @sim, got ${body.slice(0, 200)}`);
    directive = validate(parsed);
  }
  return { directive, text: kept.join("\n") };
}
