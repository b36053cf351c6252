import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { alive } from "../../local-front/bindings/sandbox/identity.js";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { descendants, nameOf } from "../support/processes.js";
import { useFront } from "../support/use-front.js";

/**
 * A pi session's tool commands run in one kept sandbox (docs/credentials.md, "The session
 * sandbox"): bubblewrap starts with its first command, not with each. What the fence hides
 * is held by sandbox.test.ts; these hold what keeping it changes, and what it must not.
 */
const tag = Math.random().toString(36).slice(2);

/** The shell command's output in `threadId`'s newest tool result, its turn completed. */
async function shell(front: Front, threadId: string, command: string): Promise<string> {
  const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command } } }) });
  expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
  return (await events(front.url, threadId)).filter((e) => e.kind === "tool-result").at(-1)?.body.output ?? "";
}

const spawnThread = async (front: Front) => (await call(front.url, "POST", "/spawn", { permissions: "allow" })).body.threadId as string;

/** The front's bubblewrap processes. */
const sandboxesOf = (front: Front) => descendants(front.proc.pid!).filter((pid) => nameOf(pid) === "bwrap");

/** Processes whose command line holds `marker`. */
function withMarker(marker: string): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker) && alive(Number(entry)) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

describe("a pi session's kept sandbox", () => {
  const shared = useFront();

  it("runs the session's commands, turn after turn, in one sandbox: a later command finds what an earlier one left in its private /tmp; another thread's session does not", async () => {
    const threadId = await spawnThread(shared());
    await shell(shared(), threadId, `echo ${tag} > /tmp/left-by-an-earlier-command`);
    const bwraps = sandboxesOf(shared());
    expect(await shell(shared(), threadId, "cat /tmp/left-by-an-earlier-command")).toContain(tag);
    // The same sandbox ran it: none started for the second command.
    expect(sandboxesOf(shared())).toEqual(bwraps);
    // The control: a session of its own, in a sandbox of its own.
    const other = await spawnThread(shared());
    const out = await shell(shared(), other, "cat /tmp/left-by-an-earlier-command || echo not-here");
    expect(out).toContain("not-here");
    expect(out).not.toContain(tag);
  });

  it("keeps the session's sandbox when another runtime starts on the machine between two of its commands", async () => {
    const threadId = await spawnThread(shared());
    await shell(shared(), threadId, `echo ${tag} > /tmp/left-before-another-runtime`);
    const bwraps = sandboxesOf(shared());
    // Its data directory under /tmp joins the places every fence hides, as each test's front and CI's clones do.
    const another = await startFront();
    try {
      expect(await shell(shared(), threadId, "cat /tmp/left-before-another-runtime")).toContain(tag);
      expect(sandboxesOf(shared())).toEqual(bwraps);
    } finally {
      await another.stop();
      removeDir(another.dataDir);
    }
  });

  it("lets nothing a command started outlive it: a process it left in the background, in a session of its own, is gone when its call returns", async () => {
    const threadId = await spawnThread(shared());
    const marker = `left-behind-${tag}`;
    const out = await shell(shared(), threadId, `setsid bash -c 'tail -f /dev/null; echo ${marker}' > /dev/null 2>&1 & sleep 0.2; echo started; pgrep -f ${marker} > /dev/null && echo running`);
    // The control: it was running when the command ended.
    expect(out).toContain("running");
    // Killed as the command ended, not when the kept sandbox does (a minute idle).
    await waitFor(async () => withMarker(marker).length === 0, 5_000);
    // And the session goes on in the same sandbox.
    expect(await shell(shared(), threadId, "echo next")).toContain("next");
  });

  it("ends with the front: no sandbox of its sessions is left after a stop", async () => {
    const own = await startFront();
    try {
      const threadId = await spawnThread(own);
      await shell(own, threadId, "true");
      const kept = sandboxesOf(own);
      expect(kept.length).toBeGreaterThan(0);
      await own.stop();
      expect(kept.filter(alive)).toEqual([]);
    } finally {
      removeDir(own.dataDir);
    }
  });
});
