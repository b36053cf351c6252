import type { Provider } from "../../src/api/accounts.js";
import type { Directive } from "./directive.js";

/**
 * The simulator's own models: the provider family that serves each, and its context
 * window in tokens. The small windows (`sim-8k`, `claude-sim-8k`) let tests and the bench
 * reach a full context in a few turns; the simulator refuses a longer prompt with the
 * provider's own error, and the engines read the same windows, so both sides agree.
 * A model marked `images` reads image input; the others are refused it, as a text-only
 * model is by its provider.
 */
export const SIMULATED_MODELS: readonly { id: string; provider: Provider; window: number; images?: true; fault?: Directive }[] = [
  { id: "sim-1", provider: "openai", window: 200_000, images: true },
  { id: "sim-2", provider: "openai", window: 200_000 },
  { id: "sim-3", provider: "openai", window: 200_000 },
  { id: "sim-mini", provider: "openai", window: 200_000 },
  { id: "sim-legacy", provider: "openai", window: 200_000 },
  { id: "sim-8k", provider: "openai", window: 8192 },
  { id: "gpt-sim", provider: "openai", window: 200_000, images: true },
  { id: "claude-sim", provider: "anthropic", window: 200_000, images: true },
  { id: "claude-sim-8k", provider: "anthropic", window: 8192, images: true },
  // Models that fail every call one way, for callers whose prompt no test writes (the curator's).
  { id: "sim-broken", provider: "openai", window: 200_000, fault: { fail: "server" } },
  { id: "sim-slow", provider: "openai", window: 200_000, fault: { delayMs: 5000 } },
  { id: "sim-cut", provider: "openai", window: 200_000, fault: { fail: "stream-end" } },
];

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
