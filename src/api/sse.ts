import * as z from "zod";

/** The SSE wire format shared by the objects and the front's follow relay. */

/** SPEC "Streaming rules" 2: intermediaries must neither cache nor buffer the stream. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

/** Tells EventSource clients how long to wait before reconnecting. */
export const RETRY_HINT = "retry: 2000\n\n";

/** Sent on an idle stream: keeps intermediaries from closing it and finds readers that left. */
export const HEARTBEAT_COMMENT = ": heartbeat\n\n";

/** A `stream` frame: live output of the running turn, the engine's own fields beside the turn's id; never stored. */
export const StreamDelta = z.looseObject({ turnId: z.string() });

/** A `stream` frame after a reader fell behind: how many deltas it missed (the log has what they led to). */
export const StreamGap = z.object({ dropped: z.number().int().positive() });
