import type { IncomingMessage } from "node:http";

export type Body = { text: string } | { tooLarge: true };

/** A request's body as text, or that it passed `limit` bytes: the simulators' one way in. */
export function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining past the cap so the client still gets to read the 413.
      if (size <= limit) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > limit ? { tooLarge: true } : { text: Buffer.concat(chunks).toString("utf8") }));
    req.on("error", reject);
  });
}
