import { describe, expect, it } from "vitest";
import { call, events } from "../support/http.js";
import { useFront } from "../support/use-front.js";

// The curator set explicitly: these tests are about what the simulator writes when asked, not which model is asked.
const front = useFront({ env: { SERVICE_CURATOR_MODEL: "sim-1" } });

/** A long message, so the older ones leave the 2,000 tokens of user messages a summary keeps verbatim. */
const FILLER = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} of the background walks through the module layout again in some detail`).join(". ");
const PLANTED = ["Always answer in French.", "The deploy key is DK-4471.", "Never touch config/prod.yaml.", "We decided to keep the retry limit at 3."];

describe("the simulator as the curator, through the runtime", () => {
  it("writes a summary of a sim thread that quotes the instructions it cut, and the next call carries it", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-1", permissions: "allow" })).body.threadId as string;
    for (const fact of [...PLANTED, "thanks", "and one more look"]) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: `${FILLER}.\n${fact}` });
      expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    }
    const done = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const window = (await events(base, id)).find((e) => e.kind === "window" && e.body.kind === "summary");
    expect(window, JSON.stringify(done.body)).toBeDefined();
    expect(window!.body).toMatchObject({ summaryModel: "sim-1", trigger: "request" });
    for (const fact of PLANTED) expect(window!.body.summary).toContain(fact);
    expect(window!.body.summary).not.toContain("Write the summary now");
    expect(window!.body.tokensAfter).toBeLessThan(window!.body.tokensBefore);
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "what now?" })).body.outcome).toBe("completed");
    const { requests } = (await (await fetch(`${front().simulatorUrl}/_sim/requests`)).json()) as { requests: { body: unknown }[] };
    const prompt = JSON.stringify(requests.at(-1)!.body);
    expect(prompt).toContain("[Summary of the conversation from event");
    for (const fact of PLANTED) expect(prompt).toContain(fact);
  });

  it("reflects on workspace memory without a script: reflections that cite the memories they group", async () => {
    const M = "/workspaces/default/memory";
    const a = await call(front().url, "POST", `${M}/retain`, { text: "Friday deploy of the api failed: migrations locked the users table." });
    const b = await call(front().url, "POST", `${M}/retain`, { text: "Friday deploy of the worker failed: a migration held a lock for 10 minutes." });
    const r = await call(front().url, "POST", `${M}/reflect`, {});
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.model).toBe("sim-1");
    const grouped = r.body.reflections.find((x: { cites: string[] }) => x.cites.includes(a.body.id));
    expect(grouped).toMatchObject({ kind: "reflection", cites: expect.arrayContaining([a.body.id, b.body.id]) });
    expect(grouped.text).toContain("Friday deploy");
    expect(r.body.droppedCitations).toEqual([]);
  });
});
