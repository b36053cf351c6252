import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installMissing, planInstall, type MachineFacts } from "../../local-front/process/debian-packages.js";
import { SANDBOX_PACKAGES } from "../../local-front/bindings/sandbox/config.js";

const missing = SANDBOX_PACKAGES;
const facts = (f: Partial<MachineFacts>): MachineFacts => ({ missing, isRoot: true, hasSudo: false, hasApt: true, allowed: true, ...f });

describe("installing the sandbox's Debian packages at start", () => {
  it("does nothing when bwrap is there, whoever runs it and whatever the setting", () => {
    for (const isRoot of [true, false])
      for (const allowed of [true, false]) expect(planInstall(facts({ missing: [], isRoot, allowed, hasApt: false }))).toEqual({ action: "none" });
  });

  it("installs as root with apt-get, and says what for and with which command", () => {
    expect(planInstall(facts({}))).toEqual({
      action: "install",
      packages: ["bubblewrap"],
      prefix: [],
      announce: "installing bubblewrap (the session sandbox) from Debian's packages: apt-get install bubblewrap",
    });
  });

  it("installs through sudo -n when not root and sudo needs no password", () => {
    expect(planInstall(facts({ isRoot: false, hasSudo: true }))).toMatchObject({
      action: "install",
      prefix: ["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"],
      announce: expect.stringContaining(": sudo -n apt-get install bubblewrap"),
    });
  });

  it("cannot when not root and sudo asks for a password (or is missing): says so, and the sudo command to run", () => {
    expect(planInstall(facts({ isRoot: false, hasSudo: false }))).toEqual({
      action: "cannot",
      reason: "bubblewrap is not installed and this user cannot install it (not root, and no sudo without a password)",
      remedy: "run 'sudo apt-get install bubblewrap'",
    });
  });

  it("cannot without apt-get, root or not", () => {
    for (const isRoot of [true, false])
      expect(planInstall(facts({ isRoot, hasSudo: true, hasApt: false }))).toEqual({
        action: "cannot",
        reason: "bubblewrap is not installed and this machine has no apt-get to install it with",
        remedy: "install bubblewrap with this system's package manager",
      });
  });

  it("never installs when the setting forbids it, and names the setting and the command", () => {
    expect(planInstall(facts({ allowed: false }))).toEqual({
      action: "cannot",
      reason: "bubblewrap is not installed and SERVICE_SANDBOX_INSTALL=off forbids installing it",
      remedy: "run 'apt-get install bubblewrap' (or unset SERVICE_SANDBOX_INSTALL)",
    });
    expect(planInstall(facts({ allowed: false, isRoot: false, hasSudo: true }))).toMatchObject({ action: "cannot", remedy: expect.stringContaining("'sudo apt-get install bubblewrap'") });
  });

  it("names every missing package, with what each is for", () => {
    const both = [...missing, { command: "chromium", pkg: "chromium", purpose: "the browser tests" }];
    expect(planInstall(facts({ missing: both }))).toMatchObject({
      packages: ["bubblewrap", "chromium"],
      announce: "installing bubblewrap (the session sandbox), chromium (the browser tests) from Debian's packages: apt-get install bubblewrap chromium",
    });
    expect(planInstall(facts({ missing: both, hasApt: false }))).toMatchObject({ reason: "bubblewrap and chromium are not installed and this machine has no apt-get to install them with" });
  });
});

describe("installing, when apt-get does not bring the package", () => {
  const path = process.env.PATH;
  const dirs: string[] = [];
  afterEach(() => {
    process.env.PATH = path;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A PATH holding only an apt-get that runs `script`: no bwrap, no sudo. */
  function aptGet(script: string): void {
    const dir = mkdtempSync(join(tmpdir(), "apt-get-stand-in-"));
    dirs.push(dir);
    writeFileSync(join(dir, "apt-get"), `#!/bin/sh\n${script}\n`);
    chmodSync(join(dir, "apt-get"), 0o755);
    process.env.PATH = dir;
  }
  const said: string[] = [];
  const say = (line: string) => said.push(line);

  // Not root, this machine's facts would be "cannot" before apt-get is reached.
  it.runIf(process.getuid?.() === 0)("says apt-get's error line, past its warnings", () => {
    aptGet('[ "$1" = update ] && exit 0\necho "W: a warning first" >&2\necho "E: Unable to locate package bubblewrap" >&2\nexit 100');
    expect(installMissing(SANDBOX_PACKAGES, true, say)).toEqual({
      reason: "installing bubblewrap failed (apt-get install: E: Unable to locate package bubblewrap)",
      remedy: "run 'apt-get install bubblewrap' and read its error",
    });
    expect(said.at(-1)).toBe("installing bubblewrap (the session sandbox) from Debian's packages: apt-get install bubblewrap");
  });

  it.runIf(process.getuid?.() === 0)("says so when the install ran but bwrap is still not on PATH", () => {
    aptGet("exit 0");
    expect(installMissing(SANDBOX_PACKAGES, true, say)).toMatchObject({ reason: "bubblewrap was installed but bwrap is still not on PATH" });
  });

  it("runs nothing when installing is off", () => {
    aptGet("exit 1");
    said.length = 0;
    expect(installMissing(SANDBOX_PACKAGES, false, say)).toMatchObject({ reason: expect.stringContaining("SERVICE_SANDBOX_INSTALL=off") });
    expect(said).toEqual([]);
  });
});
