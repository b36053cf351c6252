import { CODES } from "./api/errors.js";
import type { Engine, SpawnSpec, ThreadSpec } from "./api/threads.js";
import type { RuntimeConfig } from "./config.js";

/** Short family aliases of the engine_a vendor's models. */
const ENGINE_A_ALIASES = new Set(["opus", "sonnet", "haiku"]);

export function isEngineAModel(model: string): boolean {
  return model.startsWith("claude-") || ENGINE_A_ALIASES.has(model);
}

/** SPEC: a model of the engine_a family selects engine_a; every other id selects pi; never engine_b. */
export function engineForModel(model: string): Engine {
  return isEngineAModel(model) ? "engine_a" : "pi";
}

export type SpawnDecision = { ok: true; spec: ThreadSpec } | { ok: false; status: number; error: string; code: string; details?: Record<string, unknown> };

/** Fills a spawn's omitted fields and refuses combinations no engine can run. */
export function resolveSpawn(input: SpawnSpec, config: RuntimeConfig): SpawnDecision {
  const model = input.model ?? (input.engine === "engine_a" ? "sonnet" : config.defaultModel);
  const engine = input.engine ?? engineForModel(model);
  if (engine === "engine_b" && isEngineAModel(model))
    return { ok: false, status: 422, code: CODES.engineModelMismatch, error: `engine_b cannot serve ${model}: it is an engine_a model`, details: { engine, model } };
  if (engine === "engine_a" && !isEngineAModel(model))
    return { ok: false, status: 422, code: CODES.engineModelMismatch, error: `engine_a serves only its vendor's models (claude-*, opus, sonnet, haiku), not ${model}`, details: { engine, model } };
  const type = input.type ?? "chat";
  if (type === "build" && !input.cwd)
    return { ok: false, status: 400, code: CODES.spawnCwdRequired, error: "a build thread needs a cwd" };
  return {
    ok: true,
    spec: {
      workspace: input.workspace ?? null,
      title: input.title ?? null,
      role: input.role ?? "chat",
      type,
      engine,
      model,
      permissions: input.permissions ?? "ask",
      cwd: input.cwd ?? null,
      account: input.account ?? null,
      proxyEnv: input.proxyEnv ?? null,
    },
  };
}
