import * as z from "zod";
import { EVENT_KINDS } from "./events.js";
import { Name, SeatName } from "./threads.js";

/**
 * Which events of a watched thread wake the subscriber: of the `kinds` listed (all kinds
 * when absent) and, with `text`, whose body contains it (case-sensitive). docs/subscriptions.md.
 */
export const WakeFilter = z
  .object({
    kinds: z.array(z.enum(EVENT_KINDS)).min(1).max(64).optional(),
    text: z.string().min(1).max(200).optional(),
  })
  .strict();
export type WakeFilter = z.infer<typeof WakeFilter>;

/** One of two shapes; a watch of neither is told both, as zod's own "Invalid input" says neither. */
export const WatchTarget = z.union([z.object({ thread: z.string().min(1).max(100) }).strict(), z.object({ workspace: Name }).strict()], {
  error: 'watch is {"thread": "<thread id>"} or {"workspace": "<workspace name>"}, one key of the two',
});
export type WatchTarget = z.infer<typeof WatchTarget>;

/** `POST /threads/:id/subscriptions`. `deliver`: the seat the wake is for; absent, the seat that holds the thread. */
export const Subscribe = z
  .object({
    watch: WatchTarget,
    filter: WakeFilter.optional(),
    note: z.string().max(2000).optional(),
    deliver: z.object({ seat: SeatName }).strict().optional(),
  })
  .strict();
export type Subscribe = z.infer<typeof Subscribe>;

export const Subscription = z.object({
  watch: z.string(),
  target: WatchTarget,
  filter: WakeFilter,
  note: z.string().nullable(),
  deliver: z.object({ seat: z.string() }).nullable(),
  createdSeq: z.number().int(),
  createdAt: z.string(),
  /** Wake messages it delivered so far. */
  wakes: z.number().int(),
});
export type Subscription = z.infer<typeof Subscription>;

/** `GET /threads/:id/subscriptions`: oldest first. */
export const SubscriptionList = z.object({ subscriptions: z.array(Subscription) });
export type SubscriptionList = z.infer<typeof SubscriptionList>;

/** One matching event, as the watched thread hands it to the subscriber. */
export interface WakeItem {
  seq: number;
  kind: string;
  /** The start of its text (a reply, a message, an error), for the wake's lines. */
  excerpt: string;
  /** How many wakes led to it: 1 for an event no wake caused (docs/subscriptions.md, loops). */
  depth: number;
}

/** A wake chain this long is cut: the subscriber records a system line instead of a message that would start a turn. */
export const MAX_WAKE_DEPTH = 3;
