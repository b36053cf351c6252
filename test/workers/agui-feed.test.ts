import { env, runInDurableObject } from "cloudflare:test";
import { verifyEvents, type BaseEvent } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { AguiFeed } from "../../objects/thread/log/agui-feed.js";
import { BlobStore } from "../../objects/thread/log/blob-store.js";
import { EventLog, type SerializedEvent } from "../../objects/thread/log/event-log.js";
import { newThread, sse, value } from "./support.js";

/**
 * The feed's ordering of live text behind events still being committed, driven step by
 * step over a real log: a reader must end up with each reply's whole text, whatever
 * moment of a commit it opened at.
 */
describe("AguiFeed", () => {
  it("a reader that opens while a commit is in flight mid-reply still gets the reply's whole text", async () => {
    const { stub } = await newThread();
    await runInDurableObject(stub, async (_thread, state) => {
      const log = new EventLog(state.storage.sql, new BlobStore(env.BLOBS), 1 << 20);
      const feed = new AguiFeed({ sql: state.storage.sql, log, heartbeatMs: 60_000, threadId: () => "thr_feed" });
      const write = (kind: string, body: Record<string, unknown>) => log.commit({ kind: kind as "message", text: JSON.stringify(body), blob: null, bytes: null });
      // A batch on disk, as Readers.settle shows it: the feed first, then the log marks it durable.
      const durable = (batch: SerializedEvent[]) => {
        feed.settle(batch, true);
        log.markDurable();
      };
      const text = (delta: string) => feed.deltas([{ type: "text", turnId: "T1", delta }]);
      durable([write("message", { text: "go" }), write("turn-started", { turnId: "T1", index: 1, inputs: [2] })]);
      text("The quick ");
      // Someone posts while the reply streams; the model goes on writing while that commit is in flight.
      const posted = write("message", { text: "meanwhile" });
      text("brown fox");

      const controller = new AbortController();
      const stream = feed.open(log.durableSeq, null, controller.signal);
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      let raw = "";
      const frames = () => [...raw.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as BaseEvent & Record<string, unknown>);
      const readUntil = async (done: () => boolean) => {
        while (!done()) raw += decoder.decode((await reader.read()).value, { stream: true });
      };
      await readUntil(() => frames().some((e) => e.type === "RUN_STARTED"));
      // The reader has caught up (to the last durable event) and gone live before the commit lands.
      const live = () => [...(feed as unknown as { readers: Set<{ live: boolean }> }).readers].every((r) => r.live);
      while (!live()) await new Promise((r) => setTimeout(r, 1));

      durable([posted]);
      durable([write("reply", { turnId: "T1", text: "The quick brown fox" })]);
      durable([write("turn-ended", { turnId: "T1" })]);
      await readUntil(() => frames().some((e) => e.type === "RUN_FINISHED"));
      controller.abort();

      const list = frames();
      await expect(lastValueFrom(from(list).pipe(verifyEvents(false), toArray()))).resolves.toBeDefined();
      const written = list.filter((e) => e.type === "TEXT_MESSAGE_CONTENT" && e.messageId === "T1.r1").map((e) => e.delta);
      expect(written.join("")).toBe("The quick brown fox");
    });
  });

  it("a held message a reader joined after is shown, as last edited, when it is released", async () => {
    const { stub } = await newThread();
    const draft = value(await stub.postMessage({ text: "first draft", hold: true })).seq;
    value(await stub.editHeld(draft, { text: "final text" }));
    const gone = value(await stub.postMessage({ text: "never sent", hold: true })).seq;
    const deleted = value(await stub.deleteHeld(gone)).seq;
    const reader = (await sse(stub, `/agui?after=${deleted}`)).body!.getReader();
    value(await stub.editHeld(draft, { hold: false }));
    const decoder = new TextDecoder();
    let raw = "";
    const frames = () => [...raw.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as BaseEvent & Record<string, unknown>);
    while (frames().filter((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR").length < 2) raw += decoder.decode((await reader.read()).value, { stream: true });
    await reader.cancel();
    const list = frames();
    await expect(lastValueFrom(from(list).pipe(verifyEvents(false), toArray()))).resolves.toBeDefined();
    const user = list.filter((e) => e.type === "TEXT_MESSAGE_START" && e.role === "user").map((e) => e.messageId);
    expect(user).toEqual([`m${draft}`]);
    expect(list.find((e) => e.type === "TEXT_MESSAGE_CONTENT" && e.messageId === `m${draft}`)).toMatchObject({ delta: "final text" });
  });
});
