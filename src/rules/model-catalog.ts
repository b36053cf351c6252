import type { ModelCatalogAnswer } from "../api/accounts.js";
import { CODES } from "../api/errors.js";
import { refuse, type Refusal } from "../api/outcome.js";
import type { EngineModel } from "../api/threads.js";
import { isEngineAAlias } from "./spawn.js";

/** Ids a refusal's sentence names before it points at `models` for the rest. */
const NAMED = 12;

/**
 * A model no provider would serve, refused before a thread (or seat) is made with it, as
 * the provider would refuse its first call. Only a closed catalog (the simulator standing
 * in) can tell; with real accounts a model is the provider's to refuse, and its refusal
 * is recorded as a turn failure of class `model-not-found`. An engine_a family alias
 * (`sonnet`) is not an id but engine_a's own name for one, which its client resolves.
 * `what`: the field the model came from, for the sentence (`model`, `fallback[1]`).
 */
export function unknownModelRefusal(entries: readonly (EngineModel & { what: string })[], catalog: ModelCatalogAnswer | null): Refusal | null {
  if (!catalog?.closed) return null;
  const served = new Set(catalog.models);
  const unknown = entries.find((e) => !served.has(e.model) && !(e.engine === "engine_a" && isEngineAAlias(e.model)));
  if (!unknown) return null;
  const named = catalog.models.slice(0, NAMED).join(", ");
  const more = catalog.models.length > NAMED ? ` and ${catalog.models.length - NAMED} more` : "";
  return refuse(
    400,
    `${unknown.what}: no model ${JSON.stringify(unknown.model)}: the provider simulator stands in for the providers (no account is configured, or SERVICE_SIMULATOR=on) and serves ${named}${more} (all in \`models\`; engine_a also takes opus, sonnet and haiku)`,
    CODES.modelNotFound,
    { model: unknown.model, engine: unknown.engine, models: catalog.models },
  );
}
