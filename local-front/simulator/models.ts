import { getModels, type KnownProvider } from "@mariozechner/pi-ai";
import type { Provider } from "../../src/api/accounts.js";
import type { Directive } from "./directive.js";

/**
 * The simulator's own models: the provider family that serves each, and its context
 * window in tokens. The small windows (`sim-8k`, `claude-sim-8k`) let tests and the bench
 * reach a full context in a few turns; the simulator refuses a longer prompt with the
 * provider's own error, and the engines read the same windows, so both sides agree.
 * A model marked `images` reads image input; the others are refused it, as a text-only
 * model is by its provider. A `deprecated` one is served and never listed, as a provider
 * keeps answering a retired model for a while; `unpriced` has no price, so the cost of a
 * model nobody prices can be seen offline.
 */
export const SIMULATED_MODELS: readonly { id: string; provider: Provider; window: number; images?: true; fault?: Directive; deprecated?: true; unpriced?: true }[] = [
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
  // Models that fail every call one way, for callers whose prompt no test writes (the curator's).
  { id: "sim-broken", provider: "openai", window: 200_000, fault: { fail: "server" } },
  { id: "sim-slow", provider: "openai", window: 200_000, fault: { delayMs: 5000 } },
  { id: "sim-cut", provider: "openai", window: 200_000, fault: { fail: "stream-end" } },
];

/** A model the simulator answers for, and whether `/v1/models` lists it. */
export interface ServedModel {
  id: string;
  provider: Provider;
  /** Its own (`sim-*` and the like), or a provider's, from pi-ai's catalog. */
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

let served: ServedModel[] | null = null;

/**
 * The one catalog: every model the simulator serves where it stands in for the providers,
 * its own and each provider's as pi-ai knows it (the ids a real provider would take). A
 * spawn while the simulator runs (src/rules/model-catalog.ts), `/v1/models`
 * (bindings/completions/models.ts) and the simulator's own `/v1/models` and model check
 * (providers.ts) all read it, so they agree on which models exist.
 */
export function servedModels(): readonly ServedModel[] {
  if (served) return served;
  const own = SIMULATED_MODELS.map((m) => ({ id: m.id, provider: m.provider, own: true, listed: !m.deprecated && !m.fault }));
  const known = new Set(own.map((m) => m.id));
  const providers = (["openai", "anthropic"] as const).flatMap((provider) =>
    getModels(provider as KnownProvider)
      .filter((m) => !known.has(m.id))
      .map((m) => ({ id: m.id, provider, own: false, listed: !DEPRECATED.has(m.id) && !DEPRECATED_FAMILY.test(m.id) })),
  );
  served = [...own, ...providers];
  return served;
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
