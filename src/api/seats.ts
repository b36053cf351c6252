import { z } from "zod";
import { ENGINES, SeatName, type Engine } from "./threads.js";

/** The seat every thread starts with, made from its spawn spec (docs/seats.md). */
export const FIRST_SEAT = "main";

/**
 * Where a seat's turns run: `host` here, or `peer:<name>` on a registered external peer
 * (`POST /peers/external`), which does that seat's work and records it here.
 */
export const Placement = z.string().regex(/^(host|peer:[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/, "host, or peer:<a registered external peer>");
export type Placement = "host" | `peer:${string}`;

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
export interface Seat {
  name: string;
  engine: Engine;
  model: string;
  placement: Placement;
  role: string | null;
  state: "active" | "removed";
  /** The seat the thread's messages go to when they name none. */
  holds: boolean;
  joinedSeq: number;
  /** Each replace that changed something, oldest first. */
  replacedSeqs: number[];
  removedSeq: number | null;
}

export interface SeatList {
  seats: Seat[];
  holder: string;
}

export interface ReplaceResult {
  changed: boolean;
  seat: Seat;
}

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

export interface Handoff {
  /** The seq of its `handoff-offered` event: the offer's id. */
  fromSeq: number;
  from: string;
  to: string;
  note: string | null;
  context: HandoffContext;
  /** Who offered it: a person or program (`by`), or the seat's engine (`engine`). */
  offeredBy: "caller" | "engine";
  state: HandoffState;
  /** The event that accepted, declined or cancelled it. */
  answeredSeq: number | null;
}

export interface HandoffList {
  handoffs: Handoff[];
}

/** The fields `POST /threads/:id/handoff` answers besides the offer itself. */
export type HandoffOffered = Handoff & { ts: string };
