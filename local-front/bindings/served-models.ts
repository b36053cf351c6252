import type { KnownProvider } from "@mariozechner/pi-ai";
import { getModels } from "./model-table.js";
import { servedCatalog, type ServedModel } from "../../src/api/simulated-models.js";

let served: ServedModel[] | null = null;

/** The models a simulator standing in for the providers answers (src/api/simulated-models.ts), with pi-ai's as the providers'. */
export function servedModels(): readonly ServedModel[] {
  return (served ??= servedCatalog((["openai", "anthropic"] as const).flatMap((provider) => getModels(provider as KnownProvider).map((m) => ({ id: m.id, provider })))));
}
