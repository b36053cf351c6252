import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PostMessage } from "../../src/api/threads.js";
import { Subscribe } from "../../src/api/subscriptions.js";
import { keysAt } from "../../src/http/schema-keys.js";

describe("the keys a schema takes where an unknown key was found", () => {
  it("reads a route's top-level keys through its wrappers", () => {
    expect(keysAt(PostMessage, [])).toEqual(["text", "hold", "onBusy", "seat", "attachments", "from"]);
    const wrapped = z.object({ a: z.string(), b: z.number() }).strict().refine(() => true).optional().transform((v) => v);
    expect(keysAt(wrapped, [])).toEqual(["a", "b"]);
  });

  it("walks into nested objects and array items", () => {
    expect(keysAt(Subscribe, ["deliver"])).toEqual(["seat"]);
    const list = z.object({ items: z.array(z.object({ n: z.string() }).strict()) });
    expect(keysAt(list, ["items", 3])).toEqual(["n"]);
  });

  it("names nothing where a union would have to guess which shape was meant", () => {
    expect(keysAt(Subscribe, ["watch"])).toBeNull();
    expect(keysAt(PostMessage, ["nope"])).toBeNull();
  });
});
