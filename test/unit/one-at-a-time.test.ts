import { describe, expect, it } from "vitest";
import { OneAtATime } from "../../local-front/bindings/one-at-a-time.js";

describe("tasks one at a time per key (local-front/bindings/one-at-a-time.ts)", () => {
  it("runs a key's tasks in turn, whatever the one before came to, and other keys beside them", async () => {
    const queue = new OneAtATime();
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = queue.run("a", async () => {
      seen.push("a1 start");
      await held;
      seen.push("a1 end");
      throw new Error("a1 failed");
    });
    const second = queue.run("a", async () => void seen.push("a2"));
    const other = queue.run("b", async () => void seen.push("b1"));
    await other;
    expect(seen).toEqual(["a1 start", "b1"]);
    release();
    await expect(first).rejects.toThrow("a1 failed");
    await second;
    expect(seen).toEqual(["a1 start", "b1", "a1 end", "a2"]);
  });
});
