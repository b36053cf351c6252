/** Request and response shapes of the drain routes (SPEC "Operating the host", "States": Drain). */
import * as z from "zod";

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
export const DrainStatus = z.object({
  armed: z.boolean(),
  activeThreads: z.number().int().nonnegative(),
  active: z.array(z.string()),
  owner: z.string().nullable(),
  /** When it was armed (ISO 8601); null when disarmed. */
  since: z.string().nullable(),
  reason: z.string().nullable(),
});
export type DrainStatus = z.infer<typeof DrainStatus>;
