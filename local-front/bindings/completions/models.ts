import type { KnownProvider } from "@mariozechner/pi-ai";
import { getModels } from "../model-table.js";
import type { Provider } from "../../../src/api/accounts.js";
import type { ModelEntry } from "../../../src/api/completions.js";
import { servedModels } from "../served-models.js";

interface CatalogModel {
  id: string;
  provider: Provider;
  listed: boolean;
}

/** Models OpenAI serves only on the Responses API (or not for chat at all): never routable here. */
const NOT_CHAT = /-pro$|-pro-|codex|deep-research|realtime|audio|transcribe|tts|image|search|computer-use/;

/**
 * Which simulator answers the endpoint's calls: none; the TLS one behind the provider
 * hosts (`SERVICE_PROVIDER_UPSTREAM=simulator`, accounts configured), which adds its own
 * models; or the plain one, which stands in for every provider and so serves its whole catalog.
 */
export type SimulatorRole = "none" | "upstream" | "stands-in";

/**
 * The models the completions endpoint can route: the providers' catalogs (pi-ai's) for
 * providers some account serves, plus the simulator's (src/api/simulated-models.ts).
 */
export class ModelCatalog {
  private readonly models = new Map<string, CatalogModel>();

  constructor(providers: Set<Provider>, simulator: SimulatorRole) {
    // The simulator's catalog says what is deprecated, pi-ai's models included.
    const served = new Map(servedModels().map((m) => [m.id, m]));
    for (const provider of providers)
      for (const m of getModels(provider as KnownProvider)) if (!NOT_CHAT.test(m.id)) this.models.set(m.id, { id: m.id, provider, listed: served.get(m.id)?.listed ?? true });
    for (const m of served.values())
      if ((simulator === "stands-in" || (simulator === "upstream" && m.own)) && !NOT_CHAT.test(m.id)) this.models.set(m.id, { id: m.id, provider: m.provider, listed: m.listed });
  }

  find(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  /** `GET /v1/models`: everything routable except deprecated models (and the simulator's failing ones). */
  list(): ModelEntry[] {
    return [...this.models.values()].filter((m) => m.listed).map(entryOf);
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
