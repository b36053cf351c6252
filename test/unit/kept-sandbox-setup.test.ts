import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Sandbox } from "../../local-front/bindings/sandbox/fence.js";
import { runtimePlaces } from "../../local-front/bindings/sandbox/runtime.js";
import { KeptSandbox, RUNNER, type FencedCommand } from "../../local-front/bindings/sandbox/session-sandbox.js";
import { StartedProcesses } from "../../local-front/bindings/sandbox/started.js";
import { removeDir } from "../support/front.js";
import { waitFor } from "../support/wait-for.js";

const root = mkdtempSync(join(tmpdir(), "kept-sandbox-setup-"));
const work = join(root, "work");
mkdirSync(work);
const started = new StartedProcesses(root);
const sandbox = Sandbox.start("on", { hidden: [], readable: [], runtime: runtimePlaces(join(import.meta.dirname, "../..")) }, started, root);
// Outside /tmp, so under the read-only view of the machine, where bwrap cannot make a mount point.
const vanished = join(mkdtempSync("/var/tmp/kept-sandbox-setup-"), "their-accounts.json");
/** The sandboxes started here; each must have closed before its records' directory goes. */
const boxes: KeptSandbox[] = [];
afterAll(async () => {
  for (const box of boxes) box.end();
  await waitFor(async () => boxes.every((box) => box.ended), 10_000);
  sandbox.close();
  removeDir(root);
  removeDir(join(vanished, ".."));
});

/** The session's arguments as the fence gives them now, and as they were when `vanished` was still there to mask. */
const now = sandbox.command([process.execPath, RUNNER], { cwd: work, own: [] }).args;
const stale = [...now.slice(0, now.indexOf("--")), "--ro-bind", "/dev/null", vanished, ...now.slice(now.indexOf("--"))];

function outcome(command: FencedCommand): Promise<{ code: number | null; out: string; err: string }> {
  let out = "";
  let err = "";
  command.stdout.on("data", (d: Buffer) => (out += d));
  command.stderr.on("data", (d: Buffer) => (err += d));
  return new Promise((resolve) => command.once("close", (code) => resolve({ code, out, err })));
}

describe("a kept sandbox whose fence names a place that vanished before bwrap mounted it", () => {
  it("is set up again with the session's fence as it is now, and the command runs once, with no word of the failed setup", async () => {
    const box = new KeptSandbox(stale, work, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, started, () => now);
    boxes.push(box);
    try {
      const r = await outcome(box.run(["sh", "-c", "echo ran >> ran.txt; cat ran.txt"], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, false));
      expect(r).toEqual({ code: 0, out: "ran\n", err: "" });
      expect(box.fence).toBe(JSON.stringify(now));
      // The same sandbox takes the session's next command.
      const next = await outcome(box.run(["sh", "-c", "cat ran.txt"], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, false));
      expect(next.out).toBe("ran\n");
    } finally {
      box.end();
    }
  });

  it("fails the command with bwrap's own words when the fence worked out again is the same (the control)", async () => {
    const box = new KeptSandbox(stale, work, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, started, () => stale);
    boxes.push(box);
    try {
      const r = await outcome(box.run(["sh", "-c", "echo never"], { PATH: process.env.PATH ?? "/usr/bin:/bin" }, false));
      expect(r.code).toBe(1);
      expect(r.out).toBe("");
      expect(r.err).toContain(`bwrap: Can't create file at ${vanished}`);
    } finally {
      box.end();
    }
  });
});
