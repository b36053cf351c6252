import { CODES } from "../../src/api/errors.js";
import { refuse, type Outcome } from "../../src/api/outcome.js";
import { seatNamed, type ThreadState } from "./thread-state.js";

export function missing(): Outcome<never> {
  return refuse(404, "no such thread", CODES.threadNotFound);
}

export function archivedRefusal(s: ThreadState): Outcome<never> {
  return refuse(409, `thread ${s.id} is retired; restore it first`, CODES.threadArchived);
}

/** Why seat `name` can take nothing (a message, a replace, a removal, an offer): it never existed, or was removed. */
export function seatRefusal(s: ThreadState, name: string): Outcome<never> | null {
  const seat = seatNamed(s, name);
  if (!seat) return refuse(404, `thread ${s.id} has no seat ${name}`, CODES.seatNotFound, { seats: s.seats.map((x) => x.name) });
  if (seat.state === "removed") return refuse(409, `seat ${name} was removed at event ${seat.removedSeq}`, CODES.seatRemoved, { removedSeq: seat.removedSeq });
  return null;
}

export function degradedRefusal(s: ThreadState): Outcome<never> {
  const d = s.degraded!;
  return refuse(
    503,
    `thread ${s.id} is degraded: a body of turn ${d.index} (${d.tag}) could not be saved; POST /threads/${s.id}/recover reopens it`,
    CODES.threadDegraded,
    { key: d.key, index: d.index, tag: d.tag },
  );
}

/** Thread types that record work done elsewhere: messages land in the log, and no turn runs here. */
export const RECORD_ONLY_TYPES: readonly string[] = ["external", "completions"];

/** Whether messages on this thread wait for a turn; a record-only thread's messages are only logged. */
export function runsTurns(s: ThreadState): boolean {
  return !RECORD_ONLY_TYPES.includes(s.spec.type);
}

export function recordOnlyRefusal(s: ThreadState): Outcome<never> | null {
  if (runsTurns(s)) return null;
  return refuse(409, `thread ${s.id} is a ${s.spec.type} thread: it records work done elsewhere, and no turn runs on it`, CODES.recordOnlyThread);
}
