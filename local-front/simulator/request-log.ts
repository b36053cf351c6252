import type { IncomingHttpHeaders } from "node:http";
import type { ProtocolName } from "./protocol.js";

export interface LoggedRequest {
  at: string;
  protocol: ProtocolName;
  path: string;
  model: string | null;
  headers: { authorization?: string; "x-api-key"?: string };
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

/** The last `capacity` model requests, oldest first, so tests can see what a client really sent. */
export class RequestLog {
  private entries: LoggedRequest[] = [];

  constructor(private readonly capacity: number) {}

  add(protocol: ProtocolName, path: string, headers: IncomingHttpHeaders, body: unknown): void {
    const model = typeof body === "object" && body !== null && typeof (body as { model?: unknown }).model === "string" ? (body as { model: string }).model : null;
    const kept: LoggedRequest["headers"] = {};
    if (headers.authorization !== undefined) kept.authorization = headers.authorization;
    if (typeof headers["x-api-key"] === "string") kept["x-api-key"] = headers["x-api-key"];
    this.entries.push({ at: new Date().toISOString(), protocol, path, model, headers: kept, body });
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
  }

  list(): LoggedRequest[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
  }
}
