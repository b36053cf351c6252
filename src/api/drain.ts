/** Request and response shapes of the drain routes (SPEC "Operating the host", "States": Drain). */
import { z } from "zod";

/** SPEC "Limits": every `draining` refusal carries `retry-after: 30`. */
export const DRAIN_RETRY_AFTER_SECONDS = 30;

const Owner = z.string().min(1).max(100);

/** `POST /drain`. An `owner` claims the drain: then only `DELETE /drain/claim?owner=` by that owner disarms it. */
export const ArmDrain = z
  .object({
    owner: Owner.optional(),
    reason: z.string().min(1).max(1000).optional(),
  })
  .strict();
export type ArmDrain = z.infer<typeof ArmDrain>;

/** `DELETE /drain/claim`'s query. */
export const ReleaseDrainClaim = z.object({ owner: Owner }).strict();

/** Every `/drain` answer. `active` are the threads mid-turn, armed or not. */
export interface DrainStatus {
  armed: boolean;
  activeThreads: number;
  active: string[];
  owner: string | null;
  /** When it was armed (ISO 8601); null when disarmed. */
  since: string | null;
  reason: string | null;
}
