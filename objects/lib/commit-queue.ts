interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for one Durable Object. Appends are bound by how many commits the disk
 * takes a second, not by CPU, so writes that arrive while a commit is in flight wait for
 * it and then go to disk together in the next one. A write in a quiet moment commits at
 * once: batching adds no latency, it only shares the commit when there is a queue.
 *
 * Each write runs synchronously, in arrival order, inside its own savepoint (a write
 * that throws leaves nothing behind), and its promise settles only once the batch is
 * durable: nothing is acknowledged before it is on disk. A write that throws (a full
 * volume's SQLITE_FULL midway through it) calls `onRolledBack` at once, so the owner
 * drops what it holds in memory of the write before the next one runs. `onDurable` runs first, so
 * the owner can show the batch to readers (followers, waiting tails) only once it is
 * durable, without relying on the output gate to hold streamed bytes back.
 */
export class CommitQueue {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly onDurable: (durable: boolean) => void = () => {},
    private readonly onRolledBack: () => void = () => {},
  ) {}

  write<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const results = batch.map((p) => {
          try {
            return { ok: true as const, value: this.storage.transactionSync(p.write) };
          } catch (error) {
            this.onRolledBack();
            return { ok: false as const, error };
          }
        });
        try {
          await this.storage.sync();
        } catch (error) {
          this.onDurable(false);
          for (const p of batch) p.reject(error);
          continue;
        }
        this.onDurable(true);
        results.forEach((r, i) => (r.ok ? batch[i]!.resolve(r.value) : batch[i]!.reject(r.error)));
      }
    } finally {
      this.flushing = false;
    }
  }
}
