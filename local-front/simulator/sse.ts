import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface Frame {
  /** The `event:` line; OpenAI chat completions frames have none. */
  event?: string;
  /** Serialised as JSON unless already a string (`[DONE]`). */
  data: unknown;
  /** Carries a piece of the reply: paced by `delayMs`, and where `disconnect` cuts. */
  delta?: boolean;
}

export interface Pacing {
  delayMs: number;
  /**
   * After the first delta: `destroy` the socket (a dropped connection), or write these
   * frames (a provider's error frame, or none for a body that just ends) and end cleanly.
   */
  cut: "destroy" | Frame[] | null;
}

function encode(frame: Frame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return (frame.event ? `event: ${frame.event}\n` : "") + `data: ${data}\n\n`;
}

/** Writes the frames as one SSE response; stops quietly once the client has gone. */
export async function writeSse(res: ServerResponse, frames: Frame[], pacing: Pacing): Promise<void> {
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  let deltas = 0;
  for (const frame of frames) {
    if (frame.delta && deltas++ > 0 && pacing.delayMs > 0) {
      try {
        await sleep(pacing.delayMs, undefined, { signal: gone.signal });
      } catch {
        return;
      }
    }
    if (gone.signal.aborted) return;
    const cut = frame.delta ? pacing.cut : null;
    if (cut === "destroy") {
      // Let the delta reach the client before the connection dies, so it sees a reply cut short.
      res.write(encode(frame), () => res.destroy());
      return;
    }
    if (cut) {
      res.end(encode(frame) + cut.map(encode).join(""));
      return;
    }
    res.write(encode(frame));
  }
  res.end();
}
