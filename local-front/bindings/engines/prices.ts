import type { Api, KnownProvider, Model } from "@mariozechner/pi-ai";
import { getModels } from "../model-table.js";
import type { Provider } from "../../../src/api/accounts.js";
import { simulatedPriced } from "../../../src/api/simulated-models.js";
import { isEngineAAlias } from "../../../src/rules/spawn.js";

/** $ per million tokens, as pi-ai's catalog states prices. */
export type Price = Model<Api>["cost"];

/** The simulator's own models have a price (`sim-unpriced` aside), so cost accounting is exercised offline. */
const SIM_PRICE: Price = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 };

/**
 * The concrete id an engine_a family alias (`sonnet`, `opus`, `haiku`) stands for when a
 * provider is called directly: the agent's CLI resolves the alias itself, but a call made
 * through pi-ai (the curator's summary of an engine_a thread) reaches the provider with
 * the id as given, which a real one refuses. The newest undated id of the family in pi-ai's
 * catalog; any other id comes back unchanged.
 */
export function concreteModel(provider: Provider, id: string): string {
  if (provider !== "anthropic" || !isEngineAAlias(id)) return id;
  const version = (m: string) => /^claude-[a-z]+-(\d+)-(\d+)$/.exec(m)?.slice(1).map(Number);
  const family = (getModels("anthropic") as Model<Api>[]).map((m) => m.id).filter((m) => m.startsWith(`claude-${id}-`) && version(m));
  family.sort((a, b) => version(b)![0]! - version(a)![0]! || version(b)![1]! - version(a)![1]!);
  return family[0] ?? id;
}

/** A known model's catalog entry (prices, limits) from pi-ai, if it has one. */
export function catalogEntry(provider: Provider, id: string): Model<Api> | undefined {
  return (getModels(provider as KnownProvider) as Model<Api>[]).find((m) => m.id === id);
}

/**
 * What a model's tokens cost, or null when no catalog prices it: an unknown model's
 * spend is unknown, and reporting it as 0 would undercount a thread's cost unseen.
 */
export function priceOf(provider: Provider, id: string): Price | null {
  const simulated = simulatedPriced(id);
  if (simulated !== null) return simulated ? SIM_PRICE : null;
  return catalogEntry(provider, id)?.cost ?? null;
}

export interface TokenCounts {
  /** Input tokens not read from the provider's cache. */
  input: number;
  cacheRead: number;
  output: number;
}

/** The call's cost in dollars, rounded to a billionth, or null without a price. */
export function usdOf(price: Price | null, tokens: TokenCounts): number | null {
  if (!price) return null;
  const usd = (tokens.input * price.input + tokens.cacheRead * price.cacheRead + tokens.output * price.output) / 1_000_000;
  return Math.round(usd * 1e9) / 1e9;
}
