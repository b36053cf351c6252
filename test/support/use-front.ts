import { afterAll, beforeAll } from "vitest";
import { removeDir, startFront, type Front } from "./front.js";

/** One front for a test file: started before its tests, stopped and its data removed after them. */
export function useFront(options: Parameters<typeof startFront>[0] = {}): () => Front {
  let front: Front | undefined;
  beforeAll(async () => {
    front = await startFront(options);
  });
  afterAll(async () => {
    await front?.stop();
    if (front) removeDir(front.dataDir);
  });
  return () => front!;
}
