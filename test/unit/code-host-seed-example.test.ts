import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Octokit } from "@octokit/rest";
import { describe, expect, it } from "vitest";
import { startCodeHostSimulator } from "../../local-front/code-host-simulator/server.js";
import { Seed } from "../../local-front/code-host-simulator/seed.js";

const doc = readFileSync(resolve(import.meta.dirname, "../../docs/code-host.md"), "utf8");
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The seed example docs/code-host.md shows: the one JSON block under "The seed file". */
function example(): unknown {
  const section = doc.slice(doc.indexOf("### The seed file"));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error("docs/code-host.md has no JSON block under \"The seed file\"");
  return JSON.parse(block[1]!);
}

describe("the documented code-host seed", () => {
  it("parses through the simulator's schema and serves its pull request to Octokit", async () => {
    const seed = Seed.parse(example());
    const sim = await startCodeHostSimulator({ seed });
    try {
      const octokit = new Octokit({ auth: "ghp_example_reader", baseUrl: sim.url, log: quiet });
      const pulls = await octokit.rest.pulls.list({ owner: "acme", repo: "shop" });
      expect(pulls.data.map((p) => [p.number, p.title, p.head.ref])).toEqual([[12, "Cart: round totals to cents", "fix/cart-rounding"]]);
      const files = await octokit.rest.pulls.listFiles({ owner: "acme", repo: "shop", pull_number: 12 });
      expect(files.data[0]).toMatchObject({ filename: "src/cart.ts", status: "modified" });
    } finally {
      await sim.close();
    }
  });

  it("a typo in the example's keys would be refused, so the schema is what the example is held to", () => {
    const typo = structuredClone(example()) as { repos: { pulls: Record<string, unknown>[] }[] };
    typo.repos[0]!.pulls[0]!.tittle = typo.repos[0]!.pulls[0]!.title;
    expect(Seed.safeParse(typo).success).toBe(false);
  });
});
