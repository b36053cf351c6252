import type { HubLimits } from "../api/operator.js";

/** The build seat limit, as the hub reports it at `GET <hub>/limits`. */
export async function hubLimits(hub: string | null): Promise<HubLimits> {
  if (!hub) return { url: null, buildSeatLimit: null, note: "no hub: SERVICE_HUB_URL is not set" };
  try {
    const res = await fetch(new URL("/limits", hub), { signal: AbortSignal.timeout(3000) });
    if (!res.ok) return { url: hub, buildSeatLimit: null, error: `the hub answered ${res.status}` };
    const body = (await res.json()) as { buildSeatLimit?: unknown; build?: { seats?: unknown } };
    const limit = typeof body.buildSeatLimit === "number" ? body.buildSeatLimit : typeof body.build?.seats === "number" ? body.build.seats : null;
    return { url: hub, buildSeatLimit: limit, ...(limit === null ? { error: "the hub's answer names no build seat limit" } : {}) };
  } catch (err) {
    return { url: hub, buildSeatLimit: null, error: `the hub did not answer: ${(err as Error).message}` };
  }
}
