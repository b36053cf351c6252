import { CODES } from "../api/errors.js";
import { refuse, type Refusal } from "../api/outcome.js";

/**
 * A message gives a turn something to answer: text with more than spaces in it, or an
 * attachment. An empty one would start a turn on nothing (and cost a model call), so it is
 * refused; whitespace alone counts as empty, as no person means a blank line as a prompt.
 */
export function emptyMessageRefusal(m: { text: string; attachments?: readonly unknown[] }): Refusal | null {
  if (m.text.trim() !== "" || (m.attachments?.length ?? 0) > 0) return null;
  return refuse(400, "the message is empty: give text, or an attachment (a message of spaces alone is empty too)", CODES.messageEmpty);
}
