import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { accountHome, othersService, recordPlaces, registeredPlaces } from "../../local-front/bindings/sandbox/registry.js";
import { removeDir } from "../support/front.js";

/** The registry every runtime of this account writes, whatever its HOME. */
const registry = join(accountHome(), ".service", "runtimes");

/** The host's registry of runtimes (docs/credentials.md, "Other runtimes on the host"), in a home of its own. */
describe("the registry of runtimes", () => {
  const saved = process.env.HOME;
  let home: string;
  beforeEach(() => {
    home = mkdtempSync("/var/tmp/agent-runtime-registry-");
    process.env.HOME = home;
  });
  afterEach(() => {
    // This test's entries, in the account's real registry.
    for (const name of existsSync(registry) ? readdirSync(registry).filter((n) => n.endsWith(".json")) : [])
      if (readFileSync(join(registry, name), "utf8").includes(home)) rmSync(join(registry, name), { force: true });
    removeDir(home);
  });
  afterAll(() => {
    process.env.HOME = saved;
  });

  it("records a runtime's places owner-only, keeps them while any exists, and names ~/.service whole", () => {
    const data = join(home, "data");
    mkdirSync(data);
    recordPlaces(data, [data, join(home, "accounts.json")]);
    expect(statSync(registry).mode & 0o777).toBe(0o700);
    const entry = readdirSync(registry).find((n) => readFileSync(join(registry, n), "utf8").includes(data));
    expect(statSync(join(registry, entry!)).mode & 0o777).toBe(0o600);
    expect(registeredPlaces()).toEqual(expect.arrayContaining([join(home, ".service"), join(accountHome(), ".service"), data, join(home, "accounts.json")]));
    // A runtime whose places are all gone leaves no entry behind at the next record (the fence would skip them anyway).
    removeDir(data);
    recordPlaces(join(home, "other"), [join(home, "other")]);
    expect(registeredPlaces()).not.toContain(data);
  });

  it("records in the account's passwd home, not HOME, so a runtime with another HOME still sees it", () => {
    const data = join(home, "data");
    mkdirSync(data);
    recordPlaces(data, [data]);
    expect(existsSync(join(home, ".service"))).toBe(false);
    process.env.HOME = mkdtempSync("/var/tmp/agent-runtime-registry-other-");
    try {
      const places = registeredPlaces();
      expect(places).toContain(data);
      // Both homes' ~/.service are hidden: the front's HOME and the passwd one.
      expect(places).toEqual(expect.arrayContaining([join(process.env.HOME, ".service"), join(accountHome(), ".service")]));
    } finally {
      removeDir(process.env.HOME);
      process.env.HOME = home;
    }
  });

  it("takes another account's ~/.service only as a real directory it owns", () => {
    const uid = process.getuid!();
    mkdirSync(join(home, ".service"));
    expect(othersService(home, uid)).toBe(join(home, ".service"));
    expect(othersService(home, uid + 1)).toBeNull();
    const linked = join(home, "linked");
    mkdirSync(linked);
    symlinkSync("/usr", join(linked, ".service"));
    expect(othersService(linked, uid)).toBeNull();
    expect(othersService(join(home, "absent"), uid)).toBeNull();
  });

  it.skipIf(process.getuid?.() !== 0)("hides only what another account owns, of the places its entry names", () => {
    const nobody = 65534;
    const registry = join(home, ".service", "runtimes");
    mkdirSync(registry, { recursive: true });
    const theirs = join(home, "theirs");
    mkdirSync(theirs);
    chownSync(theirs, nobody, nobody);
    const entry = join(registry, "other-user.json");
    writeFileSync(entry, JSON.stringify({ dataDir: theirs, places: [theirs, "/usr"] }));
    chownSync(entry, nobody, nobody);
    const places = registeredPlaces();
    expect(places).toContain(theirs);
    expect(places).not.toContain("/usr");
  });
});
