import type { Provider } from "./accounts.js";

/**
 * The models the provider simulator serves as its own: the provider family that serves
 * each, and its context window in tokens. The runtime and the simulator both read this
 * table (the runtime to size windows, price and route the simulator's models, the
 * simulator to answer them), so it lives in the contract rather than in either. The small
 * windows (`sim-8k`, `claude-sim-8k`) let tests and the bench reach a full context in a
 * few turns; the simulator refuses a longer prompt with the provider's own error. A model
 * marked `images` reads image input; the others are refused it, as a text-only model is
 * by its provider. A `deprecated` one is served and never listed, as a provider keeps
 * answering a retired model for a while; `unpriced` has no price, so the cost of a model
 * nobody prices can be seen offline. A `fault` model fails every call one way (a
 * simulator directive), for callers whose prompt no test writes (the curator's).
 */
export const SIMULATED_MODELS: readonly {
  id: string;
  provider: Provider;
  window: number;
  images?: true;
  fault?: { fail?: "server" | "stream-end"; delayMs?: number };
  deprecated?: true;
  unpriced?: true;
}[] = [
  { id: "sim-1", provider: "openai", window: 200_000, images: true },
  { id: "sim-2", provider: "openai", window: 200_000 },
  { id: "sim-3", provider: "openai", window: 200_000 },
  { id: "sim-mini", provider: "openai", window: 200_000 },
  { id: "sim-legacy", provider: "openai", window: 200_000, deprecated: true },
  { id: "sim-unpriced", provider: "openai", window: 200_000, unpriced: true },
  { id: "sim-8k", provider: "openai", window: 8192 },
  { id: "gpt-sim", provider: "openai", window: 200_000, images: true },
  { id: "claude-sim", provider: "anthropic", window: 200_000, images: true },
  { id: "claude-sim-8k", provider: "anthropic", window: 8192, images: true },
  { id: "sim-broken", provider: "openai", window: 200_000, fault: { fail: "server" } },
  { id: "sim-slow", provider: "openai", window: 200_000, fault: { delayMs: 5000 } },
  { id: "sim-cut", provider: "openai", window: 200_000, fault: { fail: "stream-end" } },
];

/** A model the simulator answers for, and whether `/v1/models` lists it. */
export interface ServedModel {
  id: string;
  provider: Provider;
  /** Its own (`sim-*` and the like), or a provider's, from the providers' catalog. */
  own: boolean;
  /** Listed by `/v1/models`: not deprecated, and not one of the models that fail on purpose. */
  listed: boolean;
}

/**
 * Models the providers have retired or announced for retirement: still served when a
 * caller names one, never listed. pi-ai's catalog carries no such flag, so the list is ours.
 */
const DEPRECATED = new Set(["gpt-4", "gpt-4-turbo", "gpt-4o-2024-05-13"]);
/** Claude 3 and 3.5 releases are retired or announced for retirement. */
const DEPRECATED_FAMILY = /^claude-3-(?!7)/;

/**
 * The one catalog: every model the simulator serves where it stands in for the providers,
 * its own and each provider's (`providerModels`, pi-ai's catalog: the ids a real provider
 * would take). A spawn while the simulator runs (src/rules/model-catalog.ts), `/v1/models`
 * and the simulator's own `/v1/models` and model check all read it, so they agree.
 */
export function servedCatalog(providerModels: readonly { id: string; provider: Provider }[]): ServedModel[] {
  const own = SIMULATED_MODELS.map((m) => ({ id: m.id, provider: m.provider, own: true, listed: !m.deprecated && !m.fault }));
  const known = new Set(own.map((m) => m.id));
  const providers = providerModels.filter((m) => !known.has(m.id)).map((m) => ({ ...m, own: false, listed: !DEPRECATED.has(m.id) && !DEPRECATED_FAMILY.test(m.id) }));
  return [...own, ...providers];
}

/** Whether the simulator prices a model of its own (null: not one of its own, the provider's catalog says). */
export function simulatedPriced(id: string): boolean | null {
  const model = SIMULATED_MODELS.find((m) => m.id === id);
  return model ? model.unpriced !== true : null;
}

/** The window of a simulated model, or undefined for any other id. */
export function simulatedWindow(id: string): number | undefined {
  return SIMULATED_MODELS.find((m) => m.id === id)?.window;
}

/** Whether a simulated model reads images; undefined for any other id (the provider's catalog says). */
export function simulatedImages(id: string): boolean | undefined {
  const model = SIMULATED_MODELS.find((m) => m.id === id);
  return model ? model.images === true : undefined;
}
