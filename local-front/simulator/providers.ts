import type { Provider } from "../../src/api/accounts.js";
import { servedModels } from "./models.js";
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

const byProvider = new Map<Provider, Set<string>>();

export function serves(provider: Provider, model: string): boolean {
  let models = byProvider.get(provider);
  if (!models) {
    models = new Set(servedModels().filter((m) => m.provider === provider).map((m) => m.id));
    byProvider.set(provider, models);
  }
  return models.has(model);
}
