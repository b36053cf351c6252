import type { EngineModel } from "../api/threads.js";
import { fail } from "../http/answer.js";
import { modelCatalog } from "../platform/account-pool.js";
import type { Env } from "../platform/env.js";
import { unknownModelRefusal } from "../rules/model-catalog.js";

/**
 * Refuses (400 `model-not-found`) a thread, seat or default whose model, or any model of
 * its fallback chain, the simulator standing in for the providers does not serve. Whether
 * the simulator stands in is the front's to say (`modelCatalog`).
 */
export async function refuseUnknownModels(env: Env, spec: EngineModel & { fallback?: readonly EngineModel[] | null }, what = "model"): Promise<void> {
  const entries = [{ engine: spec.engine, model: spec.model, what }, ...(spec.fallback ?? []).map((f, i) => ({ ...f, what: `fallback[${i}]` }))];
  const refusal = unknownModelRefusal(entries, await modelCatalog(env));
  if (refusal) fail(refusal);
}
