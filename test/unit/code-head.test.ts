import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { headOf } from "../../local-front/bindings/code/git.js";
import { removeDir } from "../support/front.js";

const dir = mkdtempSync(join(tmpdir(), "code-head-"));
afterAll(() => removeDir(dir));
const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, stdio: "pipe" }).toString().trim();

describe("a checkout's head, read from .git as git reads it (local-front/bindings/code/git.ts)", () => {
  it("answers what git answers: unborn, a loose ref, a packed ref, detached, and no checkout", async () => {
    git("init", "-q", "-b", "trunk");
    expect(await headOf(dir)).toEqual({ branch: "trunk", head: null });
    git("commit", "-q", "--allow-empty", "-m", "one");
    const one = git("rev-parse", "HEAD");
    expect(await headOf(dir)).toEqual({ branch: "trunk", head: one });
    git("pack-refs", "--all");
    expect(await headOf(dir)).toEqual({ branch: "trunk", head: one });
    git("checkout", "-q", "--detach");
    expect(await headOf(dir)).toEqual({ branch: null, head: one });
    expect(await headOf(tmpdir())).toEqual({ branch: null, head: null });
  });
});
