/** Polls `probe` every 25 ms until it answers something, or fails after `ms`: a test waits on state, not on a sleep. */
export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}
