/**
 * Tasks on one key run one after another, each once the one before it settled, whatever
 * it came to; tasks on other keys run beside them. For what two at once would break: a
 * merge into one checkout, fetches into one mirror, changes to one worktree, overlap
 * passes over one repository. A key is forgotten once its last task settles.
 */
export class OneAtATime {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const mine = (this.#tails.get(key) ?? Promise.resolve()).then(task);
    const settled = mine.catch(() => {});
    this.#tails.set(key, settled);
    void settled.then(() => {
      if (this.#tails.get(key) === settled) this.#tails.delete(key);
    });
    return mine;
  }
}
