import * as z from "zod";
import { LoggedEvent, type ThreadEvent } from "./events.js";

/** A page forward, oldest first; `nextAfter` is the cursor to send next, the same one when the page is empty. */
export function forwardPageOf<E extends z.ZodType>(entry: E) {
  return z.object({ events: z.array(entry), nextAfter: z.string(), hasMore: z.boolean() });
}

/** A page back, newest first; `prevBefore` is the cursor of the page before it, null when the page is empty. */
export function reversePageOf<E extends z.ZodType>(entry: E) {
  return z.object({ events: z.array(entry), prevBefore: z.string().nullable(), hasMore: z.boolean() });
}

export type ForwardPage<E = ThreadEvent> = Omit<z.infer<ReturnType<typeof forwardPageOf>>, "events"> & { events: E[] };
export type ReversePage<E = ThreadEvent> = Omit<z.infer<ReturnType<typeof reversePageOf>>, "events"> & { events: E[] };

/** `GET /threads/:id/tail` with `after` (or `wait`). */
export const ForwardEventPage = forwardPageOf(LoggedEvent);

/** `GET /threads/:id/tail` with `before`, or neither. */
export const ReverseEventPage = reversePageOf(LoggedEvent);

export const TAIL_DEFAULT_LIMIT = 200;
export const TAIL_MAX_LIMIT = 1000;
export const TAIL_MAX_WAIT_MS = 30_000;
