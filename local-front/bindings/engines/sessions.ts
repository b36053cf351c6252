import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What an engine keeps to resume a thread's session on its next turn (engine resume state). */
export interface SessionRecord {
  sessionId: string;
  /** The engine's running cost total for the session: turns add only what it grew by. */
  costUsd: number;
}

const fileName = (threadId: string) => threadId.replace(/[^A-Za-z0-9_-]/g, "_");

/** A thread's own home for an engine's CLI (its config, sessions and caches): `<engine state dir>/<engine>/homes/<thread>`. */
export function engineHome(stateDir: string, engine: string, threadId: string): string {
  return join(stateDir, engine, "homes", fileName(threadId));
}

/** One small JSON file per thread under `<engine state dir>/<engine>/threads/`. */
export class SessionStore {
  constructor(
    private readonly stateDir: string,
    private readonly engine: string,
  ) {}

  private path(threadId: string): string {
    return join(this.stateDir, this.engine, "threads", `${fileName(threadId)}.json`);
  }

  async get(threadId: string): Promise<SessionRecord | null> {
    try {
      return JSON.parse(await readFile(this.path(threadId), "utf8")) as SessionRecord;
    } catch {
      return null;
    }
  }

  /** Written whole then renamed, so a crash leaves the old record or the new one. */
  async put(threadId: string, record: SessionRecord): Promise<void> {
    const path = this.path(threadId);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(`${path}.tmp`, JSON.stringify(record));
    await rename(`${path}.tmp`, path);
  }
}
