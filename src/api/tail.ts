import type { ThreadEvent } from "./events.js";

export interface ForwardPage<E = ThreadEvent> {
  events: E[];
  nextAfter: string;
  hasMore: boolean;
}

export interface ReversePage<E = ThreadEvent> {
  events: E[];
  prevBefore: string | null;
  hasMore: boolean;
}

export const TAIL_DEFAULT_LIMIT = 200;
export const TAIL_MAX_LIMIT = 1000;
export const TAIL_MAX_WAIT_MS = 30_000;
