import { getModels, type KnownProvider } from "@mariozechner/pi-ai";
import type { Provider } from "../../../src/api/accounts.js";
import type { ModelEntry } from "../../../src/api/completions.js";

interface CatalogModel {
  id: string;
  provider: Provider;
  deprecated: boolean;
}

/**
 * Models the providers have retired or announced for retirement: still routed when a
 * caller names one, never listed. pi-ai's catalog carries no such flag, so the list is ours.
 */
const DEPRECATED = new Set(["gpt-4", "gpt-4-turbo", "gpt-4o-2024-05-13", "sim-legacy"]);
/** Claude 3 and 3.5 releases are retired or announced for retirement. */
const DEPRECATED_FAMILY = /^claude-3-(?!7)/;
/** Models OpenAI serves only on the Responses API (or not for chat at all): never routable here. */
const NOT_CHAT = /-pro$|-pro-|codex|deep-research|realtime|audio|transcribe|tts|image|search|computer-use/;

function deprecated(id: string): boolean {
  return DEPRECATED.has(id) || DEPRECATED_FAMILY.test(id);
}

/** What the simulator answers, by the provider family a caller would reach it as. */
const SIMULATOR_MODELS: [string, Provider][] = [
  ["sim-1", "openai"],
  ["sim-mini", "openai"],
  ["gpt-sim", "openai"],
  ["claude-sim", "anthropic"],
  ["sim-legacy", "openai"],
];

/**
 * The models the completions endpoint can route: the providers' catalogs (pi-ai's) for
 * providers some account serves, plus the simulator's models whenever a simulator
 * answers (offline, or standing in for the providers).
 */
export class ModelCatalog {
  private readonly models = new Map<string, CatalogModel>();

  constructor(providers: Set<Provider>, simulator: boolean) {
    for (const provider of providers)
      for (const m of getModels(provider as KnownProvider)) if (!NOT_CHAT.test(m.id)) this.models.set(m.id, { id: m.id, provider, deprecated: deprecated(m.id) });
    if (simulator) for (const [id, provider] of SIMULATOR_MODELS) this.models.set(id, { id, provider, deprecated: deprecated(id) });
  }

  find(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  /** `GET /v1/models`: everything routable except deprecated models. */
  list(): ModelEntry[] {
    return [...this.models.values()].filter((m) => !m.deprecated).map(entryOf);
  }

  /** `GET /v1/models/:id`: any routable model, a deprecated one too, since a caller may still name it. */
  entry(id: string): ModelEntry | null {
    const model = this.models.get(id);
    return model ? entryOf(model) : null;
  }
}

/** The catalog carries no release dates; every entry gets the same fixed one. */
const CREATED = Math.floor(Date.UTC(2026, 0, 1) / 1000);

function entryOf(m: CatalogModel): ModelEntry {
  return { id: m.id, object: "model", created: CREATED, owned_by: m.provider };
}
