import { getModels, type Api, type KnownProvider, type Model } from "@mariozechner/pi-ai";

/** Where `pi` sends model calls: the real providers when keys are set, the simulator otherwise. */
export interface ProviderConfig {
  simulatorUrl: string | null;
  openai: { apiKey: string; baseUrl: string } | null;
  anthropic: { apiKey: string; baseUrl: string } | null;
}

export interface ResolvedModel {
  model: Model<Api>;
  apiKey: string;
}

export class NoProvider extends Error {}

/** Simulated models cost something, so cost accounting is exercised offline ($ per million tokens). */
const SIM_COST = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 };

function isAnthropicModel(id: string): boolean {
  return id.startsWith("claude-") || id === "opus" || id === "sonnet" || id === "haiku";
}

function isResponsesModel(id: string): boolean {
  return /^(gpt-|o\d)/.test(id);
}

/** A known model's catalog entry (prices, limits) from pi-ai, if it has one. */
function catalogEntry(provider: KnownProvider, id: string): Model<Api> | undefined {
  return (getModels(provider) as Model<Api>[]).find((m) => m.id === id);
}

function plainModel(id: string, api: Api, provider: string, baseUrl: string): Model<Api> {
  return {
    id,
    name: id,
    api,
    provider,
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: SIM_COST,
    contextWindow: 200_000,
    maxTokens: 8192,
  };
}

/**
 * A running simulator answers every model call (SERVICE_SIMULATOR=on means "offline"),
 * whatever keys are set; without it the real providers do.
 *
 * The wire protocol follows the model's family: the engine_a vendor's ids speak
 * Anthropic Messages, OpenAI's current families (gpt-*, o*) the Responses API, and every
 * other id chat completions. Offline, the simulator answers all three.
 */
export function resolveModel(config: ProviderConfig, id: string): ResolvedModel {
  if (isAnthropicModel(id)) {
    if (config.simulatorUrl) return { model: plainModel(id, "anthropic-messages", "simulator", config.simulatorUrl), apiKey: "sim-key" };
    if (config.anthropic) {
      const known = catalogEntry("anthropic", id);
      return { model: { ...(known ?? plainModel(id, "anthropic-messages", "anthropic", config.anthropic.baseUrl)), baseUrl: config.anthropic.baseUrl }, apiKey: config.anthropic.apiKey };
    }
    throw new NoProvider(`no provider for ${id}: set ANTHROPIC_API_KEY, or run with the simulator (SERVICE_SIMULATOR=on)`);
  }
  const api: Api = isResponsesModel(id) ? "openai-responses" : "openai-completions";
  if (config.simulatorUrl) return { model: plainModel(id, api, "simulator", `${config.simulatorUrl}/v1`), apiKey: "sim-key" };
  if (config.openai) {
    const known = catalogEntry("openai", id);
    return { model: { ...(known ?? plainModel(id, api, "openai", config.openai.baseUrl)), api, baseUrl: config.openai.baseUrl }, apiKey: config.openai.apiKey };
  }
  throw new NoProvider(`no provider for ${id}: set OPENAI_API_KEY, or run with the simulator (SERVICE_SIMULATOR=on)`);
}
