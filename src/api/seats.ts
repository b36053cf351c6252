import * as z from "zod";
import { ENGINES, SeatName } from "./threads.js";

/** The seat every thread starts with, made from its spawn spec (docs/seats.md). */
export const FIRST_SEAT = "main";

/**
 * Where a seat's turns run: `host` here, or `peer:<name>` on a registered external peer
 * (`POST /peers/external`), which does that seat's work and records it here.
 */
export const Placement = z.string().regex(/^(host|peer:[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/, "host, or peer:<a registered external peer>");
/** A placement as answered and typed: the request's pattern would widen it to any string. */
const PlacementShown = z.union([z.literal("host"), z.templateLiteral(["peer:", z.string()])]);
export type Placement = z.infer<typeof PlacementShown>;

export const SEAT_STATES = ["active", "removed"] as const;

/** A seat's role: free text a team gives it (`reviewer`, `fixer`, ...), at most 40. */
const SeatRole = z.string().min(1).max(40);

export const JoinSeat = z
  .object({
    name: SeatName,
    engine: z.enum(ENGINES).optional(),
    model: z.string().min(1).max(200).optional(),
    placement: Placement.optional(),
    role: SeatRole.optional(),
  })
  .strict();
export type JoinSeat = z.infer<typeof JoinSeat>;

/** What the request leaves out stays as the seat has it; a new model alone keeps the seat's engine when that engine can serve it. */
export const ReplaceSeat = JoinSeat.omit({ role: true });
export type ReplaceSeat = z.infer<typeof ReplaceSeat>;

/** What a seat is, as the Thread keeps it and `GET /threads/:id/seats` shows it. */
export const Seat = z.object({
  name: z.string(),
  engine: z.enum(ENGINES),
  model: z.string(),
  placement: PlacementShown,
  role: z.string().nullable(),
  state: z.enum(SEAT_STATES),
  /** The seat the thread's messages go to when they name none. */
  holds: z.boolean(),
  joinedSeq: z.number().int(),
  /** Each replace that changed something, oldest first. */
  replacedSeqs: z.array(z.number().int()),
  removedSeq: z.number().int().nullable(),
});
export type Seat = z.infer<typeof Seat>;

/** `GET /threads/:id/seats`: every seat, removed ones too, and the one that holds the thread. */
export const SeatList = z.object({ seats: z.array(Seat), holder: z.string() });
export type SeatList = z.infer<typeof SeatList>;

/** `POST /threads/:id/seats/replace`: `changed: false` when nothing differed (and nothing was written). */
export const ReplaceResult = z.object({ changed: z.boolean(), seat: Seat });
export type ReplaceResult = z.infer<typeof ReplaceResult>;

/** `DELETE /threads/:id/seats/:name`: the removed seat, the seat that holds the thread now, and the `seat-removed` event. */
export const SeatRemoved = z.object({ seat: Seat, holder: z.string(), seq: z.number().int(), ts: z.string() });
export type SeatRemoved = z.infer<typeof SeatRemoved>;

/**
 * What the seat that accepts a handoff is given: the whole shared transcript (`full`), or
 * a summary of it written by the curator model when the offer is accepted, followed by
 * what came after (`summary`).
 */
export const HANDOFF_CONTEXT = ["full", "summary"] as const;
export type HandoffContext = (typeof HANDOFF_CONTEXT)[number];

export const OfferHandoff = z
  .object({
    to: SeatName,
    note: z.string().max(4000).optional(),
    context: z.enum(HANDOFF_CONTEXT).optional(),
  })
  .strict();
export type OfferHandoff = z.infer<typeof OfferHandoff>;

export const HANDOFF_STATES = ["pending", "accepted", "declined", "cancelled"] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];

export const Handoff = z.object({
  /** The seq of its `handoff-offered` event: the offer's id. */
  fromSeq: z.number().int(),
  from: z.string(),
  to: z.string(),
  note: z.string().nullable(),
  context: z.enum(HANDOFF_CONTEXT),
  /** Who offered it: a person or program (`by`), or the seat's engine (`engine`). */
  offeredBy: z.enum(["caller", "engine"]),
  state: z.enum(HANDOFF_STATES),
  /** The event that accepted, declined or cancelled it. */
  answeredSeq: z.number().int().nullable(),
});
export type Handoff = z.infer<typeof Handoff>;

/** `GET /threads/:id/handoffs`: every offer, oldest first. */
export const HandoffList = z.object({ handoffs: z.array(Handoff) });
export type HandoffList = z.infer<typeof HandoffList>;

/** `POST /threads/:id/handoff`: the offer, and when its event was written. */
export const HandoffOffered = Handoff.extend({ ts: z.string() });
export type HandoffOffered = z.infer<typeof HandoffOffered>;
