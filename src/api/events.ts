/**
 * The durable event log's envelope and the kinds written today.
 * docs/events.md describes each kind and the ones later issues add.
 */
import type { ThreadSpec } from "./threads.js";


export interface SpawnBody {
  spec: ThreadSpec;
}

export interface MessageBody {
  text: string;
  /** A program that sent text no person typed. */
  from?: string;
  hold?: boolean;
}

export interface MessageEditedBody {
  /** seq of the held message that was edited. */
  target: number;
  text: string;
}

export interface MessageDeletedBody {
  target: number;
}

export interface MessageReleasedBody {
  target: number;
}

export interface ArchiveBody {
  reason: string | null;
}

export type RestoreBody = Record<string, never>;

export interface SeatLeaseBody {
  seatLease: string | null;
}

export interface ToolResultBody {
  callId: string;
  name: string;
  output: string;
  isError?: boolean;
}

export interface EventBodies {
  spawn: SpawnBody;
  message: MessageBody;
  "message-edited": MessageEditedBody;
  "message-deleted": MessageDeletedBody;
  "message-released": MessageReleasedBody;
  archive: ArchiveBody;
  restore: RestoreBody;
  "seat-lease": SeatLeaseBody;
  "tool-result": ToolResultBody;
}

export type EventKind = keyof EventBodies;

export const EVENT_KINDS = [
  "spawn",
  "message",
  "message-edited",
  "message-deleted",
  "message-released",
  "archive",
  "restore",
  "seat-lease",
  "tool-result",
] as const satisfies readonly EventKind[];

/** A body stored apart from the log: the log keeps its SHA-256 and size. */
export interface BlobRef {
  sha256: string;
  bytes: number;
}

export type ThreadEvent<K extends EventKind = EventKind> = K extends EventKind
  ? {
      seq: number;
      /** ISO-8601 UTC, millisecond precision. */
      ts: string;
      kind: K;
      body: EventBodies[K];
      /** Present when the body lives in the blob store; `body` is still the full body. */
      blob?: BlobRef;
    }
  : never;
