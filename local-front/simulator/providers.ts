import { getModels, type KnownProvider } from "@mariozechner/pi-ai";
import type { Provider } from "../../src/api/accounts.js";
import { SIMULATED_MODELS } from "./models.js";
import type { ProtocolName } from "./protocol.js";


/**
 * What each provider serves where the simulator stands in for it: its own wire protocols
 * (Anthropic's OpenAI-compatible chat completions included), and its models: the
 * simulator's of that family and the provider's catalog as pi-ai knows it.
 */
export const PROVIDERS: Record<Provider, { protocols: ProtocolName[] }> = {
  openai: { protocols: ["openai-chat", "openai-responses"] },
  anthropic: { protocols: ["anthropic-messages", "openai-chat"] },
};

const served = new Map<Provider, Set<string>>();

export function serves(provider: Provider, model: string): boolean {
  let models = served.get(provider);
  if (!models) {
    models = new Set([...SIMULATED_MODELS.filter((m) => m.provider === provider).map((m) => m.id), ...getModels(provider as KnownProvider).map((m) => m.id)]);
    served.set(provider, models);
  }
  return models.has(model);
}
