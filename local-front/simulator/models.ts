import type { KnownProvider } from "@mariozechner/pi-ai";
import { getModels } from "../bindings/model-table.js";
import { SIMULATED_MODELS, servedCatalog, type ServedModel } from "../../src/api/simulated-models.js";
import type { Directive } from "./directive.js";

let served: ServedModel[] | null = null;

/** What the simulator answers for: its own models and the providers' as pi-ai knows them (src/api/simulated-models.ts). */
export function servedModels(): readonly ServedModel[] {
  return (served ??= servedCatalog((["openai", "anthropic"] as const).flatMap((provider) => getModels(provider as KnownProvider).map((m) => ({ id: m.id, provider })))));
}

/** What a simulated model does on every call whatever the prompt says, if it is one of the failing ones. */
export function simulatedFault(id: string): Directive | undefined {
  return SIMULATED_MODELS.find((m) => m.id === id)?.fault;
}

/**
 * Tokens as the simulator counts them (a token is four characters, rounded up), for the
 * usage it reports and the window it enforces alike.
 */
export function simTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}
