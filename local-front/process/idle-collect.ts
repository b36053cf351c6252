/** How often the front looks whether it went quiet. */
export const IDLE_TICK_MS = 10_000;
/** CPU in one tick under which the front counts as quiet (1 %: its timers, the host report). */
const QUIET_CPU_MS = 100;
/** CPU in busy ticks since the last collection over which there is garbage worth a collection (a start, a few turns). */
const WORKED_CPU_MS = 300;

/**
 * Returns the memory a burst of work leaves once the front goes quiet. V8 gives memory back
 * to the system after a full collection, and a front that goes idle allocates too little to
 * reach one: after its start it held Miniflare's serialized configurations (about 29 MB of
 * buffers) and a young generation grown to 32 MB, and after a few turns the young
 * generation again, for as long as it stayed idle (docs/performance.md, "Issue 32: the
 * front's start, again"). `gc` is Node's with `--expose-gc` (`FRONT_FLAGS`); without it
 * this does nothing. One collection costs 50 to 100 ms of CPU, paid when the front has
 * nothing else to do.
 */
export function collectWhenIdle(gc: (() => void) | undefined, cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}): () => void {
  if (!gc) return () => undefined;
  // Only busy ticks count as work: a quiet front's own timers (its watch, heartbeats, the
  // host report) would otherwise add up to a collection every few minutes of doing nothing.
  // The start's CPU, before the first tick, is work.
  let worked = cpuMs();
  let last = worked;
  const timer = setInterval(() => {
    const sinceTick = cpuMs() - last;
    if (sinceTick >= QUIET_CPU_MS) worked += sinceTick;
    else if (worked > WORKED_CPU_MS) {
      gc();
      worked = 0;
    }
    last = cpuMs();
  }, IDLE_TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
