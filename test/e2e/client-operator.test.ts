import { describe, expect, it } from "vitest";
import { RuntimeError } from "../../client/index.js";
import { useFront } from "../support/use-front.js";

const front = useFront();

describe("the client library's operator and workspace calls", () => {
  it("drains and undrains, and a refused post is a rejected error with the code", async () => {
    const { client } = front();
    const { threadId } = await client.spawn({ title: "client" });
    expect((await client.armDrain({ owner: "client-test" })).armed).toBe(true);
    const refused = await client.post(threadId, { text: "no" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RuntimeError);
    expect(refused).toMatchObject({ kind: "rejected", status: 503, code: "draining" });
    await expect(client.disarmDrain()).rejects.toMatchObject({ status: 409, code: "drain-claimed" });
    expect((await client.disarmDrain("client-test")).armed).toBe(false);
    expect((await client.drain()).armed).toBe(false);
  });

  it("reads the workspace feed, the accounts, the spawn pause and the attention items", async () => {
    const { client } = front();
    const newest = await client.workspaceTail("default", { limit: 5 });
    expect(newest.events.some((e) => e.kind === "thread-spawned")).toBe(true);
    const forward = await client.workspaceTail("default", { after: 0, limit: 1 });
    expect(forward.events[0]!.seq).toBe(1);
    const accounts = await client.accounts();
    expect(accounts).toMatchObject({ accounts: [], simulator: true });
    expect((await client.spawnPause()).paused).toBe(false);
    expect((await client.attention()).items).toEqual([]);
    expect((await client.attentionChanges()).changes).toEqual([]);
    await expect(client.accessToken("nobody")).rejects.toMatchObject({ status: 404, code: "account-not-found" });
  });
});
