/** A tool result's output beyond this many bytes (UTF-8) is cut before it is recorded, whichever engine ran the tool. */
export const TOOL_OUTPUT_CAP = 256 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The output as the log keeps it: whole when it fits, else its first bytes (never half a
 * character) and a line saying how much there was, so the model and a reader both know
 * the rest exists.
 */
export function capToolOutput(output: string): string {
  const bytes = encoder.encode(output);
  if (bytes.length <= TOOL_OUTPUT_CAP) return output;
  // A character cut in two decodes to U+FFFD at the end; drop it rather than show it.
  const kept = decoder.decode(bytes.subarray(0, TOOL_OUTPUT_CAP)).replace(/\uFFFD$/, "");
  return `${kept}\n[output cut at ${TOOL_OUTPUT_CAP} bytes of ${bytes.length}]`;
}
