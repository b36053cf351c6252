import type { Api, Model } from "@mariozechner/pi-ai";
import type { SessionAccess } from "./access.js";
import { catalogEntry, concreteModel, priceOf } from "./prices.js";
import { simulatedImages, simulatedWindow } from "../../../src/api/simulated-models.js";

function isResponsesModel(id: string): boolean {
  return /^(gpt-|o\d)/.test(id);
}

/** A model's context window in tokens, from the simulator's catalog or pi-ai's; undefined when neither knows the model. */
export function windowOf(provider: SessionAccess["provider"], id: string): number | undefined {
  return simulatedWindow(id) ?? catalogEntry(provider, id)?.contextWindow;
}

/**
 * The pi-ai model for `id` on the session's provider. The wire protocol follows the
 * model's family: the engine_a vendor's ids speak Anthropic Messages, OpenAI's current
 * families (gpt-*, o*) the Responses API, and every other id chat completions. Offline
 * the simulator answers all three. Prices come from pi-ai's catalog for known models
 * (local-front/bindings/engines/prices.ts).
 */
export function piModel(access: SessionAccess, given: string): Model<Api> {
  // Offline the simulator answers the alias itself; a real provider needs the id it stands for.
  const id = access.account ? concreteModel(access.provider, given) : given;
  const api: Api = access.provider === "anthropic" ? "anthropic-messages" : isResponsesModel(id) ? "openai-responses" : "openai-completions";
  const known = access.account ? catalogEntry(access.provider, id) : undefined;
  return {
    ...(known ?? {
      id,
      name: id,
      provider: access.account ? access.provider : "simulator",
      reasoning: false,
      input: simulatedImages(id) ? ["text", "image"] : ["text"],
      // No price: pi-ai computes 0, which the turn reports as unknown (usd null), never as free.
      cost: priceOf(access.provider, id) ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: simulatedWindow(id) ?? 200_000,
      maxTokens: 8192,
    }),
    api,
    baseUrl: access.baseUrl,
  } as Model<Api>;
}
