import { CODES } from "../../src/api/errors.js";
import { refuse, type Outcome } from "./outcome.js";
import type { ThreadState } from "./thread-state.js";

export function missing(): Outcome<never> {
  return refuse(404, "no such thread", CODES.threadNotFound);
}

export function archivedRefusal(s: ThreadState): Outcome<never> {
  return refuse(409, `thread ${s.id} is retired; restore it first`, CODES.threadArchived);
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
