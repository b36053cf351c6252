import { getModels, type Api, type KnownProvider, type Model } from "@mariozechner/pi-ai";
import type { SessionAccess } from "./access.js";

/** Simulated models cost something, so cost accounting is exercised offline ($ per million tokens). */
const SIM_COST = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 };

function isResponsesModel(id: string): boolean {
  return /^(gpt-|o\d)/.test(id);
}

/** A known model's catalog entry (prices, limits) from pi-ai, if it has one. */
function catalogEntry(provider: KnownProvider, id: string): Model<Api> | undefined {
  return (getModels(provider) as Model<Api>[]).find((m) => m.id === id);
}

/**
 * The pi-ai model for `id` on the session's provider. The wire protocol follows the
 * model's family: the engine_a vendor's ids speak Anthropic Messages, OpenAI's current
 * families (gpt-*, o*) the Responses API, and every other id chat completions. Offline
 * the simulator answers all three. Prices come from pi-ai's catalog for known models.
 */
export function piModel(access: SessionAccess, id: string): Model<Api> {
  const api: Api = access.provider === "anthropic" ? "anthropic-messages" : isResponsesModel(id) ? "openai-responses" : "openai-completions";
  const known = access.account ? catalogEntry(access.provider, id) : undefined;
  return {
    ...(known ?? {
      id,
      name: id,
      provider: access.account ? access.provider : "simulator",
      reasoning: false,
      input: ["text"],
      cost: SIM_COST,
      contextWindow: 200_000,
      maxTokens: 8192,
    }),
    api,
    baseUrl: access.baseUrl,
  } as Model<Api>;
}
