/**
 * The most levels of arrays and objects a request body may nest. JSON.parse takes any
 * depth, but what handles the value next may recurse (JSON.stringify overflows its stack
 * a few thousand levels down, in the front's account pool for one), and no request of
 * this API nests more than a few levels: a deeper body is refused, not passed on.
 */
export const MAX_JSON_DEPTH = 128;

/** Whether `value` nests arrays and objects more than `max` levels deep. Iterative, so it cannot overflow itself. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}
